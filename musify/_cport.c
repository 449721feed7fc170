/* One port of an output tree written in one call that holds no lock: `writers._port_temp` and
 * the rename after it (musify/writers.py) are the reference, and `writers.write_stated` falls
 * back to them where this module was not built or a case needs them.
 *
 * Why: with `-j1 -o` the ports are written by a thread beside the migration. Each system call
 * Python makes gives the interpreter's lock away and must win it back from the migrating
 * thread, so the five calls of a port (create, write, stat, close, rename) cost five hand-overs
 * of the lock and as many thread switches: on 5,000 files about a tenth of the run's CPU time.
 * Here they are made with the lock given away once.
 *
 * put(tmp, dst, data, first_mode, mode, uid, gid) -> int
 *   Create `tmp` (O_EXCL, not following a link, `first_mode`), write `data`, and when the file
 *   has the permission bits `mode` (and, unless uid is -1, that owner and group) close it and
 *   rename it over `dst`: returns -1. When its mode or owner differ (a default ACL, a set-group-ID
 *   folder, another owner), returns the open descriptor: the caller sets them, closes, renames.
 *   Returns -2, having created nothing, when `tmp` exists already. Any other failure raises
 *   OSError, with `tmp` removed when it was created. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_NOFOLLOW
#define O_NOFOLLOW 0
#endif
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

/* The system calls of one port, made without the interpreter's lock: `put` and `put_batch`
 * share them. Returns -1 (written and renamed), -2 (tmp taken: nothing created), the open
 * descriptor when the mode or owner differ, or -3 with *err and *failed set. */
static int port_calls(const char *tmp, const char *dst, const char *buf, Py_ssize_t left, int first_mode, int mode,
                      long uid, long gid, int *err, const char **failed) {
    int fd, keep_open = 0;
    struct stat st;
    *err = 0;
    *failed = tmp;
    do {
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)first_mode);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        if (errno == EEXIST) return -2;
        *err = errno;
        return -3;
    }
    while (left > 0) {
        ssize_t n = write(fd, buf, (size_t)left);
        if (n < 0) {
            if (errno == EINTR) continue;
            *err = errno;
            break;
        }
        buf += n;
        left -= n;
    }
    if (!*err && fstat(fd, &st) != 0) *err = errno;
    if (!*err && ((int)(st.st_mode & 07777) != mode ||
                  (uid != -1 && ((long)st.st_uid != uid || (long)st.st_gid != gid)))) {
        keep_open = 1;  /* the caller sets the mode and owner through it */
    }
    if (*err || !keep_open) {
        if (close(fd) != 0 && !*err && errno != EINTR) *err = errno;
        fd = -1;
    }
    if (!*err && !keep_open && rename(tmp, dst) != 0) {
        *err = errno;
        *failed = dst;
    }
    if (*err) {
        unlink(tmp);
        return -3;
    }
    return keep_open ? fd : -1;
}

static PyObject *os_error(int err, const char *path) {
    errno = err;
    PyObject *name = PyUnicode_DecodeFSDefault(path);
    if (name) {
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, name);
        Py_DECREF(name);
    }
    return NULL;
}

static PyObject *put(PyObject *self, PyObject *args) {
    PyObject *tmp_obj = NULL, *dst_obj = NULL;
    Py_buffer data;
    int first_mode, mode, err, fd;
    long uid, gid;
    const char *failed;
    (void)self;
    if (!PyArg_ParseTuple(args, "O&O&y*iill", PyUnicode_FSConverter, &tmp_obj, PyUnicode_FSConverter, &dst_obj,
                          &data, &first_mode, &mode, &uid, &gid)) {
        Py_XDECREF(tmp_obj);
        Py_XDECREF(dst_obj);
        return NULL;
    }
    const char *tmp = PyBytes_AS_STRING(tmp_obj), *dst = PyBytes_AS_STRING(dst_obj);
    Py_BEGIN_ALLOW_THREADS
    fd = port_calls(tmp, dst, data.buf, data.len, first_mode, mode, uid, gid, &err, &failed);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    PyObject *answer = fd == -3 ? os_error(err, failed) : PyLong_FromLong(fd);
    Py_DECREF(tmp_obj);
    Py_DECREF(dst_obj);
    return answer;
}

/* mkdir, remembering the folder in `made` when it made it: 1 made, 0 a folder was there, -1
 * with errno set (ENOENT: a parent is missing). */
static int make_one(const char *path, char **made, int *n_made, int max_made) {
    if (mkdir(path, 0777) == 0) {
        char *copy = *n_made < max_made ? strdup(path) : NULL;
        if (copy) made[(*n_made)++] = copy; /* (a folder not remembered is only asked about again) */
        return 1;
    }
    if (errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
        errno = EEXIST;
    }
    return -1;
}

/* One folder of an output tree, made with its missing parents (as `writers._made_now`): 1 when
 * this call made it, 0 when it was there (a folder), -1 with errno set. Each folder it makes
 * is appended to `made` (parents first) so the caller remembers them too. */
static int make_folder(char *path, char **made, int *n_made, int max_made) {
    int got = make_one(path, made, n_made, max_made);
    if (got >= 0 || errno != ENOENT) return got;
    char *slash = strrchr(path, '/');
    if (!slash || slash == path) {
        errno = ENOENT;
        return -1;
    }
    *slash = '\0';
    int parent = make_folder(path, made, n_made, max_made);
    *slash = '/';
    return parent < 0 ? -1 : make_one(path, made, n_made, max_made);
}

enum { FOLDER_MADE = 1, FOLDER_THERE = 2, FOLDER_FAILED = 3 };

typedef struct {
    PyObject *folder, *tmp, *dst; /* fs-encoded bytes */
    Py_buffer data;
    int ensure, folder_state, first_mode, mode, answer, err, has_data;
    long uid, gid;
    const char *failed;
} Port;

/* put_batch(items) -> (answers, made)
 *   items: a sequence of (folder, ensure, tmp, dst, data, first_mode, mode, uid, gid), written
 *   in order with the interpreter's lock given away once for all of them (the writer thread of a
 *   -j1 run then seldom needs the lock the migrating thread holds). `ensure`: the folder is not
 *   known to this run yet: make it (and its parents); when it was there already, the item is
 *   answered -3 and left alone (the caller looks at what is there first, as `write_stated` does),
 *   as is every later item of that folder. Answers as `put`, plus -3 (left to the caller) and
 *   (errno, path) for a failure (nothing left behind). `made`: the folders this call created. */
static PyObject *put_batch(PyObject *self, PyObject *arg) {
    (void)self;
    PyObject *seq = PySequence_Fast(arg, "put_batch takes a sequence of ports");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    Port *ports = PyMem_Calloc(n ? (size_t)n : 1, sizeof(Port));
    int max_made = (int)(n * 4 + 16), n_made = 0;
    char **made = PyMem_Calloc((size_t)max_made, sizeof(char *));
    PyObject *answers = NULL, *made_list = NULL, *result = NULL;
    Py_ssize_t parsed = 0;
    if (!ports || !made) {
        PyErr_NoMemory();
        goto done;
    }
    for (; parsed < n; parsed++) {
        Port *p = &ports[parsed];
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, parsed), "O&pO&O&y*iill", PyUnicode_FSConverter,
                              &p->folder, &p->ensure, PyUnicode_FSConverter, &p->tmp, PyUnicode_FSConverter,
                              &p->dst, &p->data, &p->first_mode, &p->mode, &p->uid, &p->gid)) {
            Py_CLEAR(p->folder);
            Py_CLEAR(p->tmp);
            Py_CLEAR(p->dst);
            goto done;
        }
        p->has_data = 1;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        Port *p = &ports[i];
        if (p->ensure) { /* the folder's state, as an earlier item of this batch found it, or asked now */
            for (Py_ssize_t j = i - 1; j >= 0 && !p->folder_state; j--) {
                if (ports[j].folder_state && strcmp(PyBytes_AS_STRING(ports[j].folder), PyBytes_AS_STRING(p->folder)) == 0)
                    p->folder_state = ports[j].folder_state;
            }
            if (!p->folder_state) {
                int got = make_folder(PyBytes_AS_STRING(p->folder), made, &n_made, max_made);
                p->folder_state = got > 0 ? FOLDER_MADE : got == 0 ? FOLDER_THERE : FOLDER_FAILED;
            }
            if (p->folder_state != FOLDER_MADE) { /* the caller looks (and reports a failure) itself */
                p->answer = -3;
                continue;
            }
        }
        p->answer = port_calls(PyBytes_AS_STRING(p->tmp), PyBytes_AS_STRING(p->dst), p->data.buf, p->data.len,
                               p->first_mode, p->mode, p->uid, p->gid, &p->err, &p->failed);
        if (p->answer == -3) p->answer = -4;
    }
    Py_END_ALLOW_THREADS
    answers = PyList_New(n);
    made_list = PyList_New(0);
    if (!answers || !made_list) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        Port *p = &ports[i];
        PyObject *item;
        if (p->answer == -4) {
            item = Py_BuildValue("(iy)", p->err, p->failed);
        } else {
            item = PyLong_FromLong(p->answer);
        }
        if (!item) goto done;
        PyList_SET_ITEM(answers, i, item);
    }
    for (int k = 0; k < n_made; k++) {
        PyObject *name = PyBytes_FromString(made[k]);
        if (!name || PyList_Append(made_list, name) < 0) {
            Py_XDECREF(name);
            goto done;
        }
        Py_DECREF(name);
    }
    result = PyTuple_Pack(2, answers, made_list);
done:
    Py_XDECREF(answers);
    Py_XDECREF(made_list);
    if (ports) {
        for (Py_ssize_t i = 0; i < parsed; i++) {
            Py_XDECREF(ports[i].folder);
            Py_XDECREF(ports[i].tmp);
            Py_XDECREF(ports[i].dst);
            if (ports[i].has_data) PyBuffer_Release(&ports[i].data);
        }
        PyMem_Free(ports);
    }
    if (made) {
        for (int k = 0; k < n_made; k++) free(made[k]);
        PyMem_Free(made);
    }
    Py_DECREF(seq);
    return result;
}

/* probe(items) -> bytes: for each (target or None, source) of `items`, a list of str pairs, one
 * code: 1 when `target` exists (an lstat: `os.path.lexists`), else 2 when the first read of at
 * most 8 KB of `source` holds a NUL byte and no UTF-16/32 byte-order mark (`renames.keeps_name`:
 * a binary file), else 0 (a source that cannot be opened or read is not binary: the runner
 * reports it); 3 for a path holding a NUL character, which the caller answers itself. The
 * planning of a run asks this of every file it renames; the look-ups are made with the
 * interpreter's lock given away once. `renames.target_taken` and `keeps_name` are the reference. */
#define SNIFF 8192

static int wide_marked(const unsigned char *b, ssize_t n) {  /* textcodec.wide_codec, in its order */
    if (n >= 4 && b[0] == 0xff && b[1] == 0xfe && b[2] == 0 && b[3] == 0 && n % 4 == 0) return 1;
    if (n >= 4 && b[0] == 0 && b[1] == 0 && b[2] == 0xfe && b[3] == 0xff && n % 4 == 0) return 1;
    if (n >= 2 && b[0] == 0xff && b[1] == 0xfe && n % 2 == 0) return 1;
    if (n >= 2 && b[0] == 0xfe && b[1] == 0xff && n % 2 == 0) return 1;
    return 0;
}

/* One file's code. With `st` (not NULL), the file is also fstat'ed, and *whole says whether `buf`
 * holds all of it as `_cread`'s reader would have read it: a regular file, one read of at least
 * its size plus one that gave exactly its size, closed cleanly. */
static char probe_one(const char *target, const char *source, unsigned char *buf, struct stat *st,
                      ssize_t *got, int *whole) {
    struct stat taken;
    *got = -1;
    *whole = 0;
    if (target && lstat(target, &taken) == 0) return 1;
    int fd;
    do {
        fd = open(source, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return 0;
    int regular = st && fstat(fd, st) == 0 && S_ISREG(st->st_mode) && st->st_size < SNIFF;
    ssize_t n;
    do {
        n = read(fd, buf, SNIFF);
    } while (n < 0 && errno == EINTR);
    if (close(fd) == 0 && regular && n == st->st_size) *whole = 1;
    *got = n;
    if (n <= 0) return 0;
    return memchr(buf, 0, (size_t)n) != NULL && !wide_marked(buf, n) ? 2 : 0;
}

/* `path` (a str, or None) as file-system bytes in *out (a new reference; NULL for None); 0 when it
 * holds a NUL character, -1 on error. */
static int fs_path(PyObject *path, PyObject **out) {
    *out = NULL;
    if (path == Py_None) return 1;
    if (!PyUnicode_Check(path)) {
        PyErr_SetString(PyExc_TypeError, "probe: paths must be str or None");
        return -1;
    }
    PyObject *b = PyUnicode_EncodeFSDefault(path);
    if (!b) return -1;
    *out = b;
    return strlen(PyBytes_AS_STRING(b)) == (size_t)PyBytes_GET_SIZE(b);
}

typedef struct {
    char *buf; /* a copy of the whole file (in the call's `slab`), or NULL */
    ssize_t len;
    struct stat st;
} Kept;

/* `probe`, and with `reads` also the files read whole while at most `budget` bytes are kept. */
static PyObject *probe_items(PyObject *arg, Py_ssize_t budget, int reads) {
    PyObject *seq = PySequence_Fast(arg, "probe: a list of (target, source) pairs");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **paths = PyMem_Calloc((size_t)(2 * n + 1), sizeof(PyObject *));
    PyObject *codes = PyBytes_FromStringAndSize(NULL, n);
    unsigned char *buf = PyMem_Malloc(SNIFF);
    Kept *kept = reads ? PyMem_Calloc((size_t)n + 1, sizeof(Kept)) : NULL;
    /* The kept copies, one after another in one block: a malloc each grew the calling thread's
     * own arena page by page (an mprotect a page, 2,000 on 8 MB) for memory freed at the end. A
     * file is kept only under SNIFF bytes, so n of them take under n * SNIFF. */
    size_t slab_size = reads && budget > 0 ? (size_t)(budget < n * (Py_ssize_t)SNIFF ? budget : n * (Py_ssize_t)SNIFF) : 0;
    char *slab = slab_size ? malloc(slab_size) : NULL;
    size_t used = 0;
    PyObject *answer = NULL;
    if (!paths || !codes || !buf || (reads && !kept)) {
        PyErr_NoMemory();
        goto done;
    }
    char *code = PyBytes_AS_STRING(codes);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
            PyErr_SetString(PyExc_TypeError, "probe: a list of (target, source) pairs");
            goto done;
        }
        int a = fs_path(PyTuple_GET_ITEM(item, 0), &paths[2 * i]);
        int b = a < 0 ? -1 : fs_path(PyTuple_GET_ITEM(item, 1), &paths[2 * i + 1]);
        if (a < 0 || b < 0) goto done;
        if (paths[2 * i + 1] == NULL) {
            PyErr_SetString(PyExc_TypeError, "probe: a source path is required");
            goto done;
        }
        code[i] = a && b ? 0 : 3;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        if (code[i] == 3) continue;
        const char *target = paths[2 * i] ? PyBytes_AS_STRING(paths[2 * i]) : NULL;
        struct stat st;
        ssize_t got;
        int whole;
        code[i] = probe_one(target, PyBytes_AS_STRING(paths[2 * i + 1]), buf, kept && budget > 0 ? &st : NULL,
                            &got, &whole);
        if (whole && got <= budget && slab && used + (size_t)got <= slab_size) {
            kept[i].buf = slab + used;
            used += (size_t)got;
            memcpy(kept[i].buf, buf, (size_t)got);
            kept[i].len = got;
            kept[i].st = st;
            budget -= got;
        }
    }
    Py_END_ALLOW_THREADS
    if (!reads) {
        answer = codes;
        codes = NULL;
        goto done;
    }
    PyObject *list = PyList_New(n);
    if (!list) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *got = Py_None;
        Py_INCREF(got);
        if (kept[i].buf) {
            Py_DECREF(got);
            got = Py_BuildValue("(y#y#)", kept[i].buf, kept[i].len, (const char *)&kept[i].st, (Py_ssize_t)sizeof(struct stat));
            if (!got) {
                Py_DECREF(list);
                goto done;
            }
        }
        PyList_SET_ITEM(list, i, got);
    }
    answer = Py_BuildValue("(NN)", codes, list);
    codes = NULL;
done:
    if (paths) {
        for (Py_ssize_t i = 0; i < 2 * n; i++) Py_XDECREF(paths[i]);
        PyMem_Free(paths);
    }
    PyMem_Free(kept);
    free(slab);
    PyMem_Free(buf);
    Py_XDECREF(codes);
    Py_DECREF(seq);
    return answer;
}

static PyObject *probe(PyObject *self, PyObject *arg) {
    (void)self;
    return probe_items(arg, 0, 0);
}

/* probe_read(items, budget) -> (codes, reads): `probe`'s codes, and per item None or (bytes,
 * struct stat as bytes) of a file read whole by the probe's own read (`probe_one`), each kept
 * (in order) while its bytes fit what is left of `budget`: `_cread.Reader` takes them as read (the
 * planning's look at a renamed file is the read-ahead's read too; readahead.py). */
static PyObject *probe_read(PyObject *self, PyObject *args) {
    PyObject *items;
    Py_ssize_t budget;
    (void)self;
    if (!PyArg_ParseTuple(args, "On", &items, &budget)) return NULL;
    return probe_items(items, budget, 1);
}

static PyMethodDef methods[] = {
    {"put", put, METH_VARARGS, "Write one port and rename it into place, without the interpreter's lock."},
    {"put_batch", put_batch, METH_O, "Write ports in order (making their folders), the lock given away once."},
    {"probe", probe, METH_O, "Per (target, source): 1 target exists, 2 source is binary, 0 neither, 3 ask Python."},
    {"probe_read", probe_read, METH_VARARGS, "probe, and the files it read whole (bytes, stat) within a budget."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cport", NULL, -1, methods};

PyMODINIT_FUNC PyInit__cport(void) { return PyModule_Create(&module); }
