/* _cwalk: discovery's walk of a directory tree in one call, for the common case (musify/discover.py
 * `_walk` is the reference and walks everything this declines).
 *
 * walk(root, gitignore, cls, by_ext, classify) -> (files, dir_rels) | None: every regular file and
 * every folder under `root` (a str path), without following links, the files in the order of their
 * relpaths (as Python sorts them: each folder's entries are sorted, a folder's name as if "/"
 * ended it, so the caller need not sort them), the folders in no particular order, each relpath
 * posix and decoded as os.scandir decodes names (the file system encoding, surrogateescape). A file is a `cls` (discover.Found) made as its __init__ makes it,
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
#include "_cwalk.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static PyObject *empty_args;  /* () for object.__new__ */
static PyObject *slash, *key_root, *key_rel, *key_kind, *key_symlink, *key_stamp, *key_error;  /* interned */

typedef struct {
    char path[WALK_PATH_MAX];  /* the folder's path, then "/" and the relpath's next component */
    size_t root_len;           /* where the relpath starts in `path` (after the root and its "/") */
    int gitignore;
    PyObject *root, *cls, *by_ext, *classify;  /* borrowed */
    PyObject *pre;  /* borrowed: the folders listed ahead (`prefetch`, its thread done), or NULL */
    PyObject *files, *dir_rels, *template;
#ifdef RAW_LISTING
    uint64_t listing[LISTING_BYTES / 8];  /* one folder's getdents64 (read whole before its subfolders) */
#endif
} Walk;

/* One folder being listed: its descriptor (open, close-on-exec) and where the listing is. */
typedef struct {
    int fd;  /* -1 for a folder listed ahead (`prefetch`): its records are read from memory */
#ifdef RAW_LISTING
    char *buf;
    long pos, end;
#else
    DIR *dir;
#endif
} Listing;

/* 1: `fd` (taken) is listed from now on; 0: it was closed (not a folder that can be listed). */
static int listing_open(Walk *w, Listing *l, int fd) {
    if (fd < 0) return 0;
    l->fd = fd;
#ifdef RAW_LISTING
    l->buf = (char *)w->listing;
    l->pos = l->end = 0;
    return 1;
#else
    (void)w;
    if ((l->dir = fdopendir(fd)) == NULL) {
        close(fd);
        return 0;
    }
    return 1;
#endif
}

/* The next entry's name and d_type, or NULL: the end (errno 0) or a failed read (errno set). */
static const char *listing_next(Listing *l, unsigned char *type) {
#ifdef RAW_LISTING
    if (l->pos >= l->end) {
        if (l->fd < 0) { /* listed ahead, read to its end (only such listings are read from memory) */
            errno = 0;
            return NULL;
        }
        long got;
        do {
            got = syscall(SYS_getdents64, l->fd, l->buf, (unsigned long)LISTING_BYTES);
        } while (got < 0 && errno == EINTR);
        if (got <= 0) {
            errno = got < 0 ? errno : 0;
            return NULL;
        }
        l->pos = 0;
        l->end = got;
    }
    struct raw_dirent *de = (struct raw_dirent *)(l->buf + l->pos);
    l->pos += de->d_reclen;
    *type = de->d_type;
    return de->d_name;
#else
    struct dirent *de = readdir(l->dir);
    if (de == NULL) return NULL;
    *type = de->d_type;
    return de->d_name;
#endif
}

#ifdef RAW_LISTING
/* `l` reads the records the read-ahead kept for a folder (read to its end, types all known). */
static void listing_listed(Listing *l, const Listed *listed) {
    l->fd = -1;
    l->buf = listed->buf;
    l->pos = 0;
    l->end = (long)listed->len;
}
#endif

static void listing_close(Listing *l) {
#ifdef RAW_LISTING
    if (l->fd >= 0) close(l->fd);
#else
    closedir(l->dir);
#endif
}

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

/* a `cls` for the file (relpath `rel`, name `name` decoded), appended to w->files: its instance
 * dictionary a copy of the template {root, rel: None, kind: None, symlink: None, stamp: None,
 * error: None} (made presized, in that key order, without a key looked up or interned per file)
 * with its relpath and kind put in */
static int add_file(Walk *w, const char *rel, size_t rel_len, PyObject *name) {
    PyObject *rel_obj = NULL, *kind = NULL, *dict = NULL, *obj = NULL;
    int r = -1;
    if ((rel_obj = PyUnicode_DecodeFSDefaultAndSize(rel, (Py_ssize_t)rel_len)) == NULL) goto done;
    if ((kind = kind_of(w, name)) == NULL) goto done;
    if ((dict = PyDict_Copy(w->template)) == NULL) goto done;
    if (PyDict_SetItem(dict, key_rel, rel_obj) < 0 || PyDict_SetItem(dict, key_kind, kind) < 0) goto done;
    if ((obj = PyBaseObject_Type.tp_new((PyTypeObject *)w->cls, empty_args, NULL)) == NULL) goto done;
    if (PyObject_GenericSetDict(obj, dict, NULL) < 0) goto done;
    r = PyList_Append(w->files, obj);
done:
    Py_XDECREF(rel_obj);
    Py_XDECREF(kind);
    Py_XDECREF(dict);
    Py_XDECREF(obj);
    return r;
}

/* One entry of a folder, kept while the folder is sorted: its name (bytes and decoded), whether
 * it is a folder, and its sort key (the decoded name, a folder's with "/" after it). */
typedef struct {
    char *bytes;
    size_t len;
    int is_dir;
    PyObject *name, *key;
} Entry;

/* the order of the relpaths the entries start: a folder's relpaths all start with its name and
 * "/", and no sibling's name holds "/", so comparing the keys (as Python compares str) orders
 * every relpath of the tree as sorting them would */
static int by_key(const void *a, const void *b) {
    return PyUnicode_Compare(((const Entry *)a)->key, ((const Entry *)b)->key);
}

static void free_entries(Entry *entries, size_t n) {
    for (size_t i = 0; i < n; i++) {
        PyMem_Free(entries[i].bytes);
        Py_XDECREF(entries[i].name);
        Py_XDECREF(entries[i].key);
    }
    PyMem_Free(entries);
}

/* The folder's entries, read whole (1), each but "." and ".." with its name decoded and its
 * sort key; 0: declined (what the Python walk decides about, or a failed read); -1: a Python
 * error. `*out`/`*count` are set in every case (freed by the caller). */
static int read_entries(Walk *w, Listing *l, Entry **out, size_t *count) {
    size_t n = 0, cap = 16;
    Entry *entries = PyMem_Malloc(cap * sizeof(Entry));
    *out = entries;
    *count = 0;
    if (entries == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (;;) {
        unsigned char type;
        errno = 0;
        const char *name = listing_next(l, &type);
        if (name == NULL) return errno != 0 ? 0 : 1;
        if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
        if (strncmp(name, ".musify", 7) == 0 || (w->gitignore && strcmp(name, ".gitignore") == 0)) return 0;
        if (type == DT_UNKNOWN) {  /* what DirEntry.is_dir(follow_symlinks=False) asks then */
            struct stat st;
            if (fstatat(l->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
            type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
        }
        if (type != DT_DIR && type != DT_REG) return 0;
        if (n == cap) {
            Entry *more = PyMem_Realloc(entries, 2 * cap * sizeof(Entry));
            if (more == NULL) {
                PyErr_NoMemory();
                return -1;
            }
            *out = entries = more;
            cap *= 2;
        }
        Entry *e = &entries[n];
        e->len = strlen(name);
        e->is_dir = type == DT_DIR;
        e->name = e->key = NULL;
        if ((e->bytes = PyMem_Malloc(e->len + 1)) == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(e->bytes, name, e->len + 1);
        *count = ++n;
        if ((e->name = PyUnicode_DecodeFSDefaultAndSize(name, (Py_ssize_t)e->len)) == NULL) return -1;
        if (e->is_dir) {
            if ((e->key = PyUnicode_Concat(e->name, slash)) == NULL) return -1;
        } else {
            e->key = Py_NewRef(e->name);
        }
    }
}

/* 1: walked; 0: declined (the caller walks in Python); -1: a Python error is set. path[0:len] is
 * the folder's path, `fd` the folder opened (taken: closed here). Each folder is opened from its
 * parent's descriptor: the system looks up one name, not the whole path again. Its entries are
 * read whole and sorted (`by_key`), so the tree's files come out in their relpaths' order and the
 * caller need not sort them. */
static int walk_dir(Walk *w, size_t len, int fd, const void *listed) {
    Listing listing;
#ifdef RAW_LISTING
    if (listed) listing_listed(&listing, listed);
    else
#endif
    if (!listing_open(w, &listing, fd)) return 0;
    Entry *entries;
    size_t n;
    int result = read_entries(w, &listing, &entries, &n);
    if (result == 1 && n > 1) qsort(entries, n, sizeof(Entry), by_key);
    for (size_t i = 0; result == 1 && i < n; i++) {
        Entry *e = &entries[i];
        if (len + 1 + e->len + 1 > WALK_PATH_MAX) {
            result = 0;
            break;
        }
        w->path[len] = '/';
        memcpy(w->path + len + 1, e->bytes, e->len + 1);
        size_t end = len + 1 + e->len;
        const char *rel = w->path + w->root_len;
        size_t rel_len = end - w->root_len;
        if (e->is_dir) {
            if (add_decoded(w->dir_rels, rel, rel_len) < 0) {
                result = -1;
                break;
            }
            if (strcmp(e->bytes, ".git") == 0) continue;  /* listed, never entered (as the Python walk) */
            const void *sub = NULL;
#ifdef RAW_LISTING
            if (listing.fd < 0) { /* a folder listed ahead: its subfolder from there, else opened by path */
                const Listed *got = musify_cwalk_listed(w->pre, rel, rel_len);
                if (got && got->err == 0) sub = got;
                else {
                    result = walk_dir(w, end, open(w->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), NULL);
                    continue;
                }
            }
#endif
            result = walk_dir(w, end, sub ? -1 : openat(listing.fd, e->bytes, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
                              sub);
        } else if (add_file(w, rel, rel_len, e->name) < 0) {
            result = -1;
        }
    }
    free_entries(entries, n);
    w->path[len] = 0;
    listing_close(&listing);
    return result;
}

static PyObject *cwalk_walk(PyObject *self, PyObject *args) {
    PyObject *root_str, *root_obj, *cls, *by_ext, *classify, *pre = NULL;
    int gitignore;
    if (!PyArg_ParseTuple(args, "UpO!O!O|O:walk", &root_str, &gitignore, &PyType_Type, &cls, &PyDict_Type, &by_ext,
                          &classify, &pre))
        return NULL;
    const void *root_listed = NULL;
#ifdef RAW_LISTING
    int ready = pre && pre != Py_None ? musify_cwalk_prefetch_done(pre, root_str) : 0;
    if (ready < 0) return NULL;
    if (ready) {
        const Listed *got = musify_cwalk_listed(pre, "", 0);
        root_listed = got && got->err == 0 ? got : NULL;
    }
    if (!root_listed) pre = NULL;
#else
    pre = NULL;
#endif
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
    w->pre = pre;
    w->files = PyList_New(0);
    w->dir_rels = PyList_New(0);
    w->template = PyDict_New();
    PyObject *out = NULL;
    if (w->files && w->dir_rels && w->template && PyDict_SetItem(w->template, key_root, root_str) == 0
        && PyDict_SetItem(w->template, key_rel, Py_None) == 0 && PyDict_SetItem(w->template, key_kind, Py_None) == 0
        && PyDict_SetItem(w->template, key_symlink, Py_None) == 0
        && PyDict_SetItem(w->template, key_stamp, Py_None) == 0
        && PyDict_SetItem(w->template, key_error, Py_None) == 0) {
        int r = walk_dir(w, len, root_listed ? -1 : open(w->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), root_listed);
        if (r == 1) out = PyTuple_Pack(2, w->files, w->dir_rels);
        else if (r == 0) out = Py_NewRef(Py_None);
    }
    Py_XDECREF(w->files);
    Py_XDECREF(w->dir_rels);
    Py_XDECREF(w->template);
    PyMem_Free(w);
    return out;
}

static PyMethodDef methods[] = {
    {"walk", cwalk_walk, METH_VARARGS,
     "walk(root, gitignore, cls, by_ext, classify, prefetched=None) -> (files, dir_rels) | None: the tree under root, "
     "or None where the Python walk decides"},
    {"prefetch", musify_cwalk_prefetch, METH_O, "prefetch(root) -> the tree's folders listed by a thread, for walk()"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cwalk", NULL, -1, methods};

PyMODINIT_FUNC PyInit__cwalk(void) {
    if (empty_args == NULL && (empty_args = PyTuple_New(0)) == NULL) return NULL;
    if (slash == NULL) {
        if ((slash = PyUnicode_InternFromString("/")) == NULL || (key_root = PyUnicode_InternFromString("root")) == NULL
            || (key_rel = PyUnicode_InternFromString("rel")) == NULL
            || (key_kind = PyUnicode_InternFromString("kind")) == NULL
            || (key_symlink = PyUnicode_InternFromString("symlink")) == NULL
            || (key_stamp = PyUnicode_InternFromString("stamp")) == NULL
            || (key_error = PyUnicode_InternFromString("error")) == NULL)
            return NULL;
    }
    PyTypeObject *prefetch_type = musify_cwalk_prefetch_type();
    if (prefetch_type && PyType_Ready(prefetch_type) < 0) return NULL;
    return PyModule_Create(&module);
}
