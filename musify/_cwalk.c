/* _cwalk: discovery's walk of a directory tree in one call, for the common case (musify/discover.py
 * `_walk` is the reference and walks everything this declines).
 *
 * walk(root, gitignore, cls, by_ext, classify) -> (files, dir_rels) | None: every regular file and
 * every folder under `root` (a str path), without following links, in no particular order (the
 * caller sorts), each relpath posix and decoded as os.scandir decodes names (the file system
 * encoding, surrogateescape). A file is a `cls` (discover.Found) made as its __init__ makes it,
 * its instance dictionary {root, rel, kind, symlink: None, stamp: None, error: None}, its kind
 * `by_ext[name[dot:]]` where discover.classify answers so (a dot after a character of the name
 * that is not a dot or a backslash), else `classify(name)`. A folder named ".git" is listed in
 * dir_rels and not entered. None, with nothing
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

static PyObject *empty_args;  /* () for object.__new__ */

typedef struct {
    char path[WALK_PATH_MAX];  /* the folder's path, then "/" and the relpath's next component */
    size_t root_len;           /* where the relpath starts in `path` (after the root and its "/") */
    int gitignore;
    PyObject *root, *cls, *by_ext, *classify;  /* borrowed */
    PyObject *files, *dir_rels;
} Walk;

/* s[0:n] decoded as os.fsdecode decodes it, appended to `list` */
static int add_decoded(PyObject *list, const char *s, size_t n) {
    PyObject *text = PyUnicode_DecodeFSDefaultAndSize(s, (Py_ssize_t)n);
    if (text == NULL) return -1;
    int r = PyList_Append(list, text);
    Py_DECREF(text);
    return r;
}

/* the kind of the file `name` as discover.classify gives it (a new reference), or NULL */
static PyObject *kind_of(Walk *w, PyObject *name) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(name);
    Py_ssize_t dot = PyUnicode_FindChar(name, '.', 0, n, -1);
    if (dot == -2) return NULL;
    if (dot > 0) {
        Py_UCS4 before = PyUnicode_READ_CHAR(name, dot - 1);
        if (before != '.' && before != '/' && before != '\\') {
            PyObject *ext = PyUnicode_Substring(name, dot, n);
            if (ext == NULL) return NULL;
            PyObject *kind = PyDict_GetItemWithError(w->by_ext, ext);
            Py_DECREF(ext);
            if (kind != NULL) return Py_NewRef(kind);
            if (PyErr_Occurred()) return NULL;
        }
    }
    return PyObject_CallOneArg(w->classify, name);
}

/* a `cls` for the file (relpath path[root_len:end], name `name_bytes`), appended to w->files */
static int add_file(Walk *w, const char *rel, size_t rel_len, const char *name_bytes, size_t name_len) {
    PyObject *rel_obj = NULL, *name = NULL, *kind = NULL, *dict = NULL, *obj = NULL;
    int r = -1;
    if ((rel_obj = PyUnicode_DecodeFSDefaultAndSize(rel, (Py_ssize_t)rel_len)) == NULL) goto done;
    if ((name = PyUnicode_DecodeFSDefaultAndSize(name_bytes, (Py_ssize_t)name_len)) == NULL) goto done;
    if ((kind = kind_of(w, name)) == NULL) goto done;
    if ((dict = PyDict_New()) == NULL) goto done;
    if (PyDict_SetItemString(dict, "root", w->root) < 0 || PyDict_SetItemString(dict, "rel", rel_obj) < 0
        || PyDict_SetItemString(dict, "kind", kind) < 0 || PyDict_SetItemString(dict, "symlink", Py_None) < 0
        || PyDict_SetItemString(dict, "stamp", Py_None) < 0 || PyDict_SetItemString(dict, "error", Py_None) < 0)
        goto done;
    if ((obj = PyBaseObject_Type.tp_new((PyTypeObject *)w->cls, empty_args, NULL)) == NULL) goto done;
    if (PyObject_GenericSetDict(obj, dict, NULL) < 0) goto done;
    r = PyList_Append(w->files, obj);
done:
    Py_XDECREF(rel_obj);
    Py_XDECREF(name);
    Py_XDECREF(kind);
    Py_XDECREF(dict);
    Py_XDECREF(obj);
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
        } else if (add_file(w, rel, rel_len, name, name_len) < 0) {
            result = -1;
            break;
        }
    }
    w->path[len] = 0;
    closedir(dir);
    return result;
}

static PyObject *cwalk_walk(PyObject *self, PyObject *args) {
    PyObject *root_str, *root_obj, *cls, *by_ext, *classify;
    int gitignore;
    if (!PyArg_ParseTuple(args, "UpO!O!O:walk", &root_str, &gitignore, &PyType_Type, &cls, &PyDict_Type, &by_ext,
                          &classify))
        return NULL;
    if (!PyUnicode_FSConverter(root_str, &root_obj)) return NULL;
    const char *root = PyBytes_AS_STRING(root_obj);
    size_t root_len = (size_t)PyBytes_GET_SIZE(root_obj);
    /* declined: a root that is the file system's ("/": its relpaths would start differently),
     * one too long for the buffer (a NUL in it is a ValueError, as os.scandir raises) */
    if (root_len < 2 || root[root_len - 1] == '/' || root_len + 2 > WALK_PATH_MAX) {
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
    w->root = root_str;
    w->cls = cls;
    w->by_ext = by_ext;
    w->classify = classify;
    w->files = PyList_New(0);
    w->dir_rels = PyList_New(0);
    PyObject *out = NULL;
    if (w->files && w->dir_rels) {
        int r = walk_dir(w, len, open(w->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (r == 1) out = PyTuple_Pack(2, w->files, w->dir_rels);
        else if (r == 0) out = Py_NewRef(Py_None);
    }
    Py_XDECREF(w->files);
    Py_XDECREF(w->dir_rels);
    PyMem_Free(w);
    return out;
}

static PyMethodDef methods[] = {
    {"walk", cwalk_walk, METH_VARARGS,
     "walk(root, gitignore, cls, by_ext, classify) -> (files, dir_rels) | None: the tree under root, or None where "
     "the Python walk decides"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cwalk", NULL, -1, methods};

PyMODINIT_FUNC PyInit__cwalk(void) {
    if (empty_args == NULL && (empty_args = PyTuple_New(0)) == NULL) return NULL;
    return PyModule_Create(&module);
}
