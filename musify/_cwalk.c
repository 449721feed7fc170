/* _cwalk: discovery's walk of a directory tree in one call, for the common case (musify/discover.py
 * `_walk` is the reference and walks everything this declines).
 *
 * walk(root, gitignore) -> (file_rels, file_names, dir_rels) | None: every regular file and every
 * folder under `root` (a str path), without following links, in no particular order (the caller
 * sorts), each relpath posix and decoded as os.scandir decodes names (the file system encoding,
 * surrogateescape). A folder named ".git" is listed in dir_rels and not entered. None, with nothing
 * to undo, when the tree holds what the Python walk decides about and this does not: an entry that
 * is neither a regular file nor a folder (a link, a FIFO, a socket, a device), a name starting
 * ".musify" (musify's own files), a ".gitignore" when `gitignore` is true, a folder that cannot be
 * opened or read, a path longer than the buffer. Every run lists its inputs, and the Python walk
 * costs about 5 us an entry of interpreter work (a DirEntry, its tests, a sort key, the Found)
 * beside the system's listing; here that is a readdir loop. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WALK_PATH_MAX 8192

typedef struct {
    char path[WALK_PATH_MAX];  /* the folder's path, then "/" and the relpath's next component */
    size_t root_len;           /* where the relpath starts in `path` (after the root and its "/") */
    int gitignore;
    PyObject *file_rels, *file_names, *dir_rels;
} Walk;

/* s[0:n] decoded as os.fsdecode decodes it, appended to `list` */
static int add_decoded(PyObject *list, const char *s, size_t n) {
    PyObject *text = PyUnicode_DecodeFSDefaultAndSize(s, (Py_ssize_t)n);
    if (text == NULL) return -1;
    int r = PyList_Append(list, text);
    Py_DECREF(text);
    return r;
}

/* 1: walked; 0: declined (the caller walks in Python); -1: a Python error is set. path[0:len] is
 * the folder's path, `fd` the folder opened (taken: closed here). Each folder is opened from its
 * parent's descriptor: the system looks up one name, not the whole path again. */
static int walk_dir(Walk *w, size_t len, int fd) {
    if (fd < 0) return 0;
    DIR *dir = fdopendir(fd);
    if (dir == NULL) {
        close(fd);
        return 0;
    }
    int result = 1;
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(dir);
        if (de == NULL) {
            if (errno != 0) result = 0;
            break;
        }
        const char *name = de->d_name;
        if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
        if (strncmp(name, ".musify", 7) == 0 || (w->gitignore && strcmp(name, ".gitignore") == 0)) {
            result = 0;
            break;
        }
        int is_dir;
        unsigned char type = de->d_type;
        if (type == DT_UNKNOWN) {  /* what DirEntry.is_dir(follow_symlinks=False) asks then */
            struct stat st;
            if (fstatat(dirfd(dir), name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
                result = 0;
                break;
            }
            type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
        }
        if (type == DT_DIR) is_dir = 1;
        else if (type == DT_REG) is_dir = 0;
        else {
            result = 0;
            break;
        }
        size_t name_len = strlen(name);
        if (len + 1 + name_len + 1 > WALK_PATH_MAX) {
            result = 0;
            break;
        }
        w->path[len] = '/';
        memcpy(w->path + len + 1, name, name_len + 1);
        size_t end = len + 1 + name_len;
        const char *rel = w->path + w->root_len;
        size_t rel_len = end - w->root_len;
        if (is_dir) {
            if (add_decoded(w->dir_rels, rel, rel_len) < 0) {
                result = -1;
                break;
            }
            if (strcmp(name, ".git") == 0) continue;  /* listed, never entered (as the Python walk) */
            result = walk_dir(w, end, openat(dirfd(dir), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (result != 1) break;
        } else if (add_decoded(w->file_rels, rel, rel_len) < 0
                   || add_decoded(w->file_names, name, name_len) < 0) {
            result = -1;
            break;
        }
    }
    w->path[len] = 0;
    closedir(dir);
    return result;
}

static PyObject *cwalk_walk(PyObject *self, PyObject *args) {
    PyObject *root_obj;
    int gitignore;
    if (!PyArg_ParseTuple(args, "O&p:walk", PyUnicode_FSConverter, &root_obj, &gitignore)) return NULL;
    const char *root = PyBytes_AS_STRING(root_obj);
    size_t root_len = (size_t)PyBytes_GET_SIZE(root_obj);
    /* declined: a root that is the file system's ("/": its relpaths would start differently),
     * one holding a NUL (the reference raises), one too long for the buffer */
    if (root_len < 2 || root[root_len - 1] == '/' || root_len + 2 > WALK_PATH_MAX || strlen(root) != root_len) {
        Py_DECREF(root_obj);
        Py_RETURN_NONE;
    }
    Walk *w = PyMem_Malloc(sizeof(Walk));
    if (w == NULL) {
        Py_DECREF(root_obj);
        return PyErr_NoMemory();
    }
    memcpy(w->path, root, root_len + 1);
    Py_DECREF(root_obj);
    size_t len = root_len;
    w->root_len = len + 1;
    w->gitignore = gitignore;
    w->file_rels = PyList_New(0);
    w->file_names = PyList_New(0);
    w->dir_rels = PyList_New(0);
    PyObject *out = NULL;
    if (w->file_rels && w->file_names && w->dir_rels) {
        int r = walk_dir(w, len, open(w->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (r == 1) out = PyTuple_Pack(3, w->file_rels, w->file_names, w->dir_rels);
        else if (r == 0) out = Py_NewRef(Py_None);
    }
    Py_XDECREF(w->file_rels);
    Py_XDECREF(w->file_names);
    Py_XDECREF(w->dir_rels);
    PyMem_Free(w);
    return out;
}

static PyMethodDef methods[] = {
    {"walk", cwalk_walk, METH_VARARGS,
     "walk(root, gitignore) -> (file_rels, file_names, dir_rels) | None: the tree under root, or None where "
     "the Python walk decides"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cwalk", NULL, -1, methods};

PyMODINIT_FUNC PyInit__cwalk(void) { return PyModule_Create(&module); }
