/* A run's source files read ahead of the migration by a thread of its own, which never holds
 * the interpreter's lock (musify/readahead.py drives it; `discover.read_regular_stated` is the
 * reference for what a read is).
 *
 * Why: with -j1 the migrating thread opened, stat'ed, read and closed every file itself, each
 * call through Python and each giving the lock away and winning it back: about 20 us a file, a
 * tenth of a second on 5,000 small files, all on the run's critical path. Read here, on the other
 * core, the migrating thread only copies bytes that are already there.
 *
 * Reader(paths, stat_result, max_files, max_bytes, max_file, offered=None)
 *   `offered`: per path, None or (data, struct stat as bytes), a read made as this thread makes
 *   one, its data bytes or any object with a buffer (the rename probe's memoryview of its own
 *   copy: musify/_cport_probe.c, copied into bytes only when taken);
 *   one (the rename probe's: musify/_cport.c `probe_read`); such a file is not read again, and is
 *   handed over, as every file, only while a stat of its path still finds it unchanged.
 *   Starts the thread, which reads `paths` (str) in order, holding at most `max_files` files or
 *   about `max_bytes` bytes read and not taken yet (so a big tree is never all in memory). A
 *   file is only read when it is exactly what the reference would read without a second look:
 *   open (non-blocking, no controlling terminal, close-on-exec), fstat, a regular file of at
 *   most `max_file` bytes, one read of its size plus one that gives exactly its size (the file's
 *   end), and a clean close. Anything else (an error, a FIFO, a folder, a file that grew or shrank,
 *   a bigger file) is left to the caller, which reads it through Python and so reports exactly
 *   what it reported before.
 * take(k) -> (bytes, stat_result) or None
 *   The `k`th file as read (None: read it yourself), when a stat of its path still finds the file
 *   that was read, unchanged (else None: a file removed or replaced after it was read ahead is
 *   reported as the reference reports it when its turn comes). Files before `k` not taken are dropped;
 *   a file taken (or passed) once is answered None from then on. Waits, without the lock, when
 *   the thread has not reached it yet.
 * close()
 *   Stops the thread and frees what it holds (also done when the Reader goes away). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif
#ifndef O_NOCTTY
#define O_NOCTTY 0
#endif

enum { PENDING, READY, FALLBACK, DROPPED };

/* This process's id, read once and again in a forked child (pthread_atfork): `take` asks it of
 * every file, and getpid() is a system call each time. */
static pid_t this_pid;

static void forked_child(void) { this_pid = getpid(); }

typedef struct {
    char *path; /* NULL: not for the thread (a NUL in the name): the caller reads it */
    char *buf;  /* READY: the file's bytes (malloc'ed) */
    PyObject *pre; /* READY from the start: what the rename probe read (offered: bytes or a buffer), or NULL */
    Py_ssize_t len;
    struct stat st;
    int state;
} Item;

typedef struct {
    PyObject_HEAD
    Item *items;
    Py_ssize_t n, next_read, next_take, held, max_files, max_bytes, max_file;
    PyTypeObject *stat_type;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* the thread waits for room, `take` for its file: both on this */
    int running, finished, stop, reader_waits, taker_waits;
    pid_t pid; /* a forked child has no thread: it reads everything itself */
} Reader;

/* One file as the reference reads it, or FALLBACK; no lock held. */
static int read_one(Item *it, Py_ssize_t max_file) {
    int fd;
    if (!it->path) return FALLBACK;
    do {
        fd = open(it->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) return FALLBACK;
    int state = FALLBACK;
    if (fstat(fd, &it->st) == 0 && S_ISREG(it->st.st_mode) && it->st.st_size <= max_file) {
        size_t want = (size_t)it->st.st_size + 1;
        char *buf = malloc(want);
        ssize_t got;
        do {
            got = buf ? read(fd, buf, want) : -1;
        } while (got < 0 && errno == EINTR);
        if (buf && got == (ssize_t)it->st.st_size) { /* the whole file, and its end */
            it->buf = buf;
            it->len = got;
            state = READY;
        } else {
            free(buf);
        }
    }
    if (close(fd) != 0 && state == READY) { /* the reference raises: it reports that */
        free(it->buf);
        it->buf = NULL;
        state = FALLBACK;
    }
    return state;
}

/* Whether the thread, waiting for room, should read again: once the window has drained to half,
 * so it is woken once per half window, not once a file (each wake-up can take the core from the
 * migrating thread for a few microseconds). The lock held. */
static int drained(Reader *r) {
    return r->next_read - r->next_take <= r->max_files / 2 && r->held <= r->max_bytes / 2;
}

static void *run(void *arg) {
    Reader *r = arg;
    pthread_mutex_lock(&r->lock);
    while (!r->stop && r->next_read < r->n) {
        if (r->next_read - r->next_take >= r->max_files || r->held >= r->max_bytes) {
            r->reader_waits = 1;
            while (!r->stop && !drained(r)) pthread_cond_wait(&r->cond, &r->lock);
            r->reader_waits = 0;
            continue;
        }
        Py_ssize_t i = r->next_read++;
        if (r->items[i].state != PENDING) continue; /* dropped: `take` went past it */
        Item got = r->items[i];
        pthread_mutex_unlock(&r->lock);
        int state = read_one(&got, r->max_file);
        pthread_mutex_lock(&r->lock);
        Item *it = &r->items[i];
        if (it->state == DROPPED) { /* passed while it was read */
            free(got.buf);
        } else {
            it->st = got.st;
            it->buf = got.buf;
            it->len = state == READY ? got.len : 0;
            it->state = state;
            r->held += it->len;
        }
        if (r->taker_waits) pthread_cond_broadcast(&r->cond);
    }
    r->finished = 1;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

static void drop(Reader *r, Item *it) { /* the lock held (and the interpreter's) */
    if (it->state == READY && !it->pre) r->held -= it->len;
    free(it->buf);
    it->buf = NULL;
    Py_CLEAR(it->pre);
    it->state = DROPPED;
}

static void stop_thread(Reader *r) {
    if (!r->running) return;
    r->running = 0;
    if (r->pid != this_pid) return; /* a forked child: the thread is the parent's */
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    Py_BEGIN_ALLOW_THREADS
    pthread_join(r->thread, NULL);
    Py_END_ALLOW_THREADS
}

static void free_items(Reader *r) {
    if (!r->items) return;
    for (Py_ssize_t i = 0; i < r->n; i++) {
        free(r->items[i].buf);
        free(r->items[i].path);
        Py_CLEAR(r->items[i].pre);
    }
    PyMem_Free(r->items);
    r->items = NULL;
}

static void Reader_dealloc(Reader *r) {
    stop_thread(r);
    free_items(r);
    if (r->pid == this_pid) {
        pthread_cond_destroy(&r->cond);
        pthread_mutex_destroy(&r->lock);
    }
    Py_XDECREF(r->stat_type);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

/* The offered reads (None or (bytes, struct stat as bytes) per path) as items READY from the start,
 * not counted in the window: those files are not read again. */
static int take_offers(Reader *r, PyObject *offered) {
    PyObject *seq = PySequence_Fast(offered, "Reader: offered reads, one per path");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n && i < r->n; i++) {
        PyObject *got = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyTuple_Check(got) || PyTuple_GET_SIZE(got) != 2 || !r->items[i].path) continue;
        PyObject *data = PyTuple_GET_ITEM(got, 0), *st = PyTuple_GET_ITEM(got, 1);
        if (!PyBytes_Check(st) || PyBytes_GET_SIZE(st) != (Py_ssize_t)sizeof(struct stat)) continue;
        Py_ssize_t len;
        if (PyBytes_Check(data)) {
            len = PyBytes_GET_SIZE(data);
        } else {
            Py_buffer view;
            if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) {
                PyErr_Clear();
                continue;
            }
            len = view.len;
            PyBuffer_Release(&view);
        }
        Item *it = &r->items[i];
        memcpy(&it->st, PyBytes_AS_STRING(st), sizeof(struct stat));
        if (!S_ISREG(it->st.st_mode) || it->st.st_size != len || it->st.st_size > r->max_file) continue;
        Py_INCREF(data);
        it->pre = data;
        it->len = len;
        it->state = READY;
    }
    Py_DECREF(seq);
    return 0;
}

static PyObject *Reader_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *paths, *offered = Py_None;
    PyTypeObject *stat_type;
    Py_ssize_t max_files, max_bytes, max_file;
    (void)kwds;
    if (!PyArg_ParseTuple(args, "OO!nnn|O", &paths, &PyType_Type, &stat_type, &max_files, &max_bytes, &max_file,
                          &offered))
        return NULL;
    PyObject *seq = PySequence_Fast(paths, "Reader takes a sequence of paths");
    if (!seq) return NULL;
    Reader *r = (Reader *)type->tp_alloc(type, 0);
    if (!r) {
        Py_DECREF(seq);
        return NULL;
    }
    r->pid = this_pid;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->cond, NULL);
    Py_INCREF(stat_type);
    r->stat_type = stat_type;
    r->max_files = max_files > 0 ? max_files : 1;
    r->max_bytes = max_bytes;
    r->max_file = max_file;
    r->n = PySequence_Fast_GET_SIZE(seq);
    r->items = PyMem_Calloc(r->n ? (size_t)r->n : 1, sizeof(Item));
    if (!r->items) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < r->n; i++) {
        PyObject *name = PyUnicode_EncodeFSDefault(PySequence_Fast_GET_ITEM(seq, i));
        if (!name) goto fail;
        const char *s = PyBytes_AS_STRING(name);
        if (strlen(s) == (size_t)PyBytes_GET_SIZE(name)) {
            r->items[i].path = strdup(s);
            if (!r->items[i].path) {
                Py_DECREF(name);
                PyErr_NoMemory();
                goto fail;
            }
        }
        Py_DECREF(name);
    }
    Py_DECREF(seq);
    if (offered != Py_None && take_offers(r, offered) < 0) {
        Py_DECREF(r);
        return NULL;
    }
    if (pthread_create(&r->thread, NULL, run, r) == 0) {
        r->running = 1;
    } else {
        r->finished = 1; /* no thread: every file is the caller's */
    }
    return (PyObject *)r;
fail:
    Py_DECREF(seq);
    Py_DECREF(r);
    return NULL;
}

/* The os.stat_result CPython's os.fstat makes of `st` (posixmodule.c, _pystat_fromstructstat,
 * Linux layout: musify/readahead.py checks the type has it before it makes a Reader). */
static PyObject *stat_result(PyTypeObject *type, const struct stat *st) {
    PyObject *v = PyStructSequence_New(type);
    if (!v) return NULL;
    PyStructSequence_SET_ITEM(v, 0, PyLong_FromLong((long)st->st_mode));
    PyStructSequence_SET_ITEM(v, 1, PyLong_FromUnsignedLongLong((unsigned long long)st->st_ino));
    PyStructSequence_SET_ITEM(v, 2, PyLong_FromUnsignedLongLong((unsigned long long)st->st_dev));
    PyStructSequence_SET_ITEM(v, 3, PyLong_FromLong((long)st->st_nlink));
    PyStructSequence_SET_ITEM(v, 4, st->st_uid == (uid_t)-1 ? PyLong_FromLong(-1) : PyLong_FromUnsignedLong(st->st_uid));
    PyStructSequence_SET_ITEM(v, 5, st->st_gid == (gid_t)-1 ? PyLong_FromLong(-1) : PyLong_FromUnsignedLong(st->st_gid));
    PyStructSequence_SET_ITEM(v, 6, PyLong_FromLongLong((long long)st->st_size));
    const struct timespec *times[3] = {&st->st_atim, &st->st_mtim, &st->st_ctim};
    for (int k = 0; k < 3; k++) {
        long long sec = (long long)times[k]->tv_sec;
        long nsec = times[k]->tv_nsec;
        PyStructSequence_SET_ITEM(v, 7 + k, PyLong_FromLongLong(sec));
        PyStructSequence_SET_ITEM(v, 10 + k, PyFloat_FromDouble((double)sec + nsec * 1e-9));
        PyStructSequence_SET_ITEM(v, 13 + k, PyLong_FromLongLong(sec * 1000000000LL + nsec));
    }
    PyStructSequence_SET_ITEM(v, 16, PyLong_FromLong((long)st->st_blksize));
    PyStructSequence_SET_ITEM(v, 17, PyLong_FromLong((long)st->st_blocks));
    PyStructSequence_SET_ITEM(v, 18, PyLong_FromLong((long)st->st_rdev));
    for (int k = 0; k < 19; k++) {
        if (!PyStructSequence_GET_ITEM(v, k)) {
            Py_DECREF(v);
            return NULL;
        }
    }
    return v;
}

/* Whether `path` is still the file read (same file, size and times): a file removed, replaced
 * or written since it was read ahead is read again by the caller, as if never read ahead (one
 * stat, made with the lock held: a microsecond on a local file system). */
static int unchanged(const char *path, const struct stat *was) {
    struct stat now;
    if (stat(path, &now) != 0) return 0;
    return now.st_dev == was->st_dev && now.st_ino == was->st_ino && now.st_size == was->st_size &&
           now.st_mode == was->st_mode && now.st_mtim.tv_sec == was->st_mtim.tv_sec &&
           now.st_mtim.tv_nsec == was->st_mtim.tv_nsec && now.st_ctim.tv_sec == was->st_ctim.tv_sec &&
           now.st_ctim.tv_nsec == was->st_ctim.tv_nsec;
}

static PyObject *Reader_take(Reader *r, PyObject *arg) {
    Py_ssize_t k = PyLong_AsSsize_t(arg);
    if (k == -1 && PyErr_Occurred()) return NULL;
    if (!r->items || r->pid != this_pid) Py_RETURN_NONE;
    pthread_mutex_lock(&r->lock);
    if (k < r->next_take || k >= r->n) {
        pthread_mutex_unlock(&r->lock);
        Py_RETURN_NONE;
    }
    for (Py_ssize_t i = r->next_take; i < k; i++) drop(r, &r->items[i]);
    r->next_take = k + 1; /* claimed: no other caller gets it */
    if (r->items[k].state == PENDING && !r->finished) {
        if (r->reader_waits) pthread_cond_broadcast(&r->cond);
        pthread_mutex_unlock(&r->lock);
        Py_BEGIN_ALLOW_THREADS
        pthread_mutex_lock(&r->lock);
        r->taker_waits++;
        while (r->items[k].state == PENDING && !r->finished) pthread_cond_wait(&r->cond, &r->lock);
        r->taker_waits--;
        pthread_mutex_unlock(&r->lock);
        Py_END_ALLOW_THREADS
        pthread_mutex_lock(&r->lock);
    }
    Item *it = &r->items[k];
    int state = it->state;
    char *buf = it->buf;
    PyObject *pre = it->pre; /* (a reference handed over) */
    Py_ssize_t len = it->len;
    struct stat st = it->st;
    if (state == READY && !pre) r->held -= len;
    it->buf = NULL;
    it->pre = NULL;
    it->state = DROPPED;
    if (r->reader_waits && drained(r)) pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    if (state == READY && !unchanged(it->path, &st)) state = FALLBACK;
    if (state != READY) {
        free(buf);
        Py_XDECREF(pre);
        Py_RETURN_NONE;
    }
    PyObject *data;
    if (pre && !PyBytes_Check(pre)) { /* an offered buffer: its bytes, copied now */
        Py_buffer view;
        data = NULL;
        if (PyObject_GetBuffer(pre, &view, PyBUF_SIMPLE) == 0) {
            data = PyBytes_FromStringAndSize(view.buf, view.len);
            PyBuffer_Release(&view);
        }
        Py_DECREF(pre);
    } else {
        data = pre ? pre : PyBytes_FromStringAndSize(buf, len);
    }
    free(buf);
    if (!data) return NULL;
    PyObject *stated = stat_result(r->stat_type, &st);
    if (!stated) {
        Py_DECREF(data);
        return NULL;
    }
    PyObject *answer = PyTuple_Pack(2, data, stated);
    Py_DECREF(data);
    Py_DECREF(stated);
    return answer;
}

static PyObject *Reader_close(Reader *r, PyObject *unused) {
    (void)unused;
    stop_thread(r);
    if (r->pid == this_pid) free_items(r);
    Py_RETURN_NONE;
}

static PyMethodDef reader_methods[] = {
    {"take", (PyCFunction)Reader_take, METH_O, "The kth file as (bytes, stat_result), or None: read it yourself."},
    {"close", (PyCFunction)Reader_close, METH_NOARGS, "Stop the thread and free what it holds."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "musify._cread.Reader",
    .tp_basicsize = sizeof(Reader),
    .tp_dealloc = (destructor)Reader_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Reads a list of files ahead, in order, in a thread that holds no interpreter lock.",
    .tp_methods = reader_methods,
    .tp_new = Reader_new,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cread", NULL, -1, NULL};

PyMODINIT_FUNC PyInit__cread(void) {
    if (PyType_Ready(&ReaderType) < 0) return NULL;
    this_pid = getpid();
    if (pthread_atfork(NULL, NULL, forked_child) != 0) return PyErr_Format(PyExc_OSError, "pthread_atfork failed");
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&ReaderType);
    if (PyModule_AddObject(m, "Reader", (PyObject *)&ReaderType) < 0) {
        Py_DECREF(&ReaderType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
