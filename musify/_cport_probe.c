/* The rename probe of `_cport` (musify/renames.py `keep_names` asks it; `renames.target_taken`
 * and `keeps_name` are the reference).
 *
 * probe(items) -> bytes: for each (target or None, source) of `items`, a list of str pairs, one
 * code: 1 when `target` exists (an lstat: `os.path.lexists`), else 2 when the first read of at
 * most 8 KB of `source` holds a NUL byte and no UTF-16/32 byte-order mark (`renames.keeps_name`:
 * a binary file), else 0 (a source that cannot be opened or read is not binary: the runner
 * reports it); 3 for a path holding a NUL character, which the caller answers itself. The
 * planning of a run asks this of every file it renames; the look-ups are made with the
 * interpreter's lock given away once.
 *
 * probe_read(items, budget) -> (codes, reads): `probe`'s codes, and per item None or (bytes,
 * struct stat as bytes) of a file read whole by the probe's own read (`probe_one`), each kept
 * (in order) while its bytes fit what is left of `budget`: `_cread.Reader` takes them as read (the
 * planning's look at a renamed file is the read-ahead's read too; readahead.py).
 *
 * Probe(items, budget) -> an object whose `run()` answers the items, and may be called by several
 * threads at once: each claims the next item not yet claimed (an atomic counter), so two threads
 * share the work of one list, and each returns when no item is left. `result()`, once every
 * `run()` has returned, gives `probe`'s answer (budget 0) or `probe_read`'s. The run's planning
 * starts `run()` in a thread while it loads the rules, then calls it itself: the look-ups, all
 * system calls, were a third of the time before the first file is migrated, on one core. With
 * two threads the reads a budget keeps are the ones that fit as they come, not always the first
 * in order; which files are kept changes nothing but which the read-ahead reads again. */
#include "_cport.h"
#include <errno.h>
#include <fcntl.h>
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
    char *buf; /* a copy of the whole file (in the probe's `slab`), or NULL */
    ssize_t len;
    struct stat st;
} Kept;

typedef struct {
    PyObject_HEAD
    Py_ssize_t n;
    PyObject **paths; /* per item: target (bytes, or NULL for None), source (bytes) */
    char *code;       /* per item: its answer (3 from the start for a path with a NUL) */
    Kept *kept;       /* per item, with a budget; else NULL */
    /* The kept copies, one after another in one block: a malloc each grew the calling thread's
     * own arena page by page (an mprotect a page, 2,000 on 8 MB) for memory freed at the end. A
     * file is kept only under SNIFF bytes, so n of them take under n * SNIFF. */
    char *slab;
    size_t slab_size;
    size_t used;      /* bytes of `slab` handed out (atomic) */
    Py_ssize_t next;  /* the next item to claim (atomic) */
    int running;      /* `run()` calls under way (changed with the interpreter's lock held) */
    int answered;     /* `result()` was given: what it held is freed */
} Probe;

static void probe_free(Probe *p, int keep_slab) {
    if (p->paths) {
        for (Py_ssize_t i = 0; i < 2 * p->n; i++) Py_XDECREF(p->paths[i]);
        PyMem_Free(p->paths);
        p->paths = NULL;
    }
    PyMem_Free(p->code);
    p->code = NULL;
    PyMem_Free(p->kept);
    p->kept = NULL;
    if (!keep_slab) {
        free(p->slab);
        p->slab = NULL;
    }
}

static void Probe_dealloc(Probe *p) {
    probe_free(p, 0);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

/* The items parsed into `p` (with the interpreter's lock): 0, or -1 with an exception set. */
static int probe_setup(Probe *p, PyObject *items, Py_ssize_t budget) {
    PyObject *seq = PySequence_Fast(items, "probe: a list of (target, source) pairs");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int ok = -1;
    p->paths = PyMem_Calloc((size_t)(2 * n + 1), sizeof(PyObject *));
    p->code = PyMem_Malloc((size_t)n + 1);
    p->kept = budget > 0 ? PyMem_Calloc((size_t)n + 1, sizeof(Kept)) : NULL;
    p->slab_size = budget > 0 ? (size_t)(budget < n * (Py_ssize_t)SNIFF ? budget : n * (Py_ssize_t)SNIFF) : 0;
    p->slab = p->slab_size ? malloc(p->slab_size) : NULL;
    if (!p->paths || !p->code || (budget > 0 && !p->kept)) {
        PyErr_NoMemory();
        goto done;
    }
    if (p->slab_size && !p->slab) p->slab_size = 0; /* no room: nothing kept, every answer the same */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        p->n = i + 1; /* what `probe_free` releases */
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
            PyErr_SetString(PyExc_TypeError, "probe: a list of (target, source) pairs");
            goto done;
        }
        int a = fs_path(PyTuple_GET_ITEM(item, 0), &p->paths[2 * i]);
        int b = a < 0 ? -1 : fs_path(PyTuple_GET_ITEM(item, 1), &p->paths[2 * i + 1]);
        if (a < 0 || b < 0) goto done;
        if (p->paths[2 * i + 1] == NULL) {
            PyErr_SetString(PyExc_TypeError, "probe: a source path is required");
            goto done;
        }
        p->code[i] = a && b ? 0 : 3;
    }
    p->n = n;
    ok = 0;
done:
    Py_DECREF(seq);
    return ok;
}

/* Claim and answer items until none is left (without the interpreter's lock). */
static void probe_work(Probe *p, unsigned char *buf) {
    for (;;) {
        Py_ssize_t i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED);
        if (i >= p->n) return;
        if (p->code[i] == 3) continue;
        const char *target = p->paths[2 * i] ? PyBytes_AS_STRING(p->paths[2 * i]) : NULL;
        struct stat st;
        ssize_t got;
        int whole;
        p->code[i] = probe_one(target, PyBytes_AS_STRING(p->paths[2 * i + 1]), buf, p->kept ? &st : NULL, &got, &whole);
        if (!whole || !p->slab) continue;
        size_t at = __atomic_load_n(&p->used, __ATOMIC_RELAXED);
        do {
            if (at + (size_t)got > p->slab_size) break;
        } while (!__atomic_compare_exchange_n(&p->used, &at, at + (size_t)got, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
        if (at + (size_t)got > p->slab_size) continue; /* no room left for it: read again later */
        p->kept[i].buf = p->slab + at;
        memcpy(p->kept[i].buf, buf, (size_t)got);
        p->kept[i].len = got;
        p->kept[i].st = st;
    }
}

/* The kept copies as a read-only buffer (`result(views=True)` slices it): the slab lives as long
 * as a view of it does. */
static int Probe_getbuffer(Probe *p, Py_buffer *view, int flags) {
    if (!p->slab) {
        PyErr_SetString(PyExc_BufferError, "probe: nothing kept");
        return -1;
    }
    return PyBuffer_FillInfo(view, (PyObject *)p, p->slab, (Py_ssize_t)p->used, 1, flags);
}

static PyBufferProcs probe_buffer = {(getbufferproc)Probe_getbuffer, NULL};

static PyObject *Probe_run(Probe *p, PyObject *unused) {
    (void)unused;
    if (p->answered) Py_RETURN_NONE;
    unsigned char *buf = PyMem_RawMalloc(SNIFF);
    if (!buf) return PyErr_NoMemory();
    p->running++;
    Py_BEGIN_ALLOW_THREADS
    probe_work(p, buf);
    Py_END_ALLOW_THREADS
    p->running--;
    PyMem_RawFree(buf);
    Py_RETURN_NONE;
}

/* The codes (bytes), and with a budget the reads too, each data a bytes object, or with `views`
 * a memoryview of the probe's own copy (no second copy of every file made while the run waits:
 * the read-ahead copies each into bytes when its file is taken); what the probe held is let go
 * (the copies once no view is left). */
static PyObject *probe_answer(Probe *p, int views) {
    if (p->answered || p->running) {
        PyErr_SetString(PyExc_RuntimeError, p->answered ? "probe: result() was already given"
                                                        : "probe: result() while run() is under way");
        return NULL;
    }
    PyObject *codes = PyBytes_FromStringAndSize(p->code, p->n);
    if (!codes) return NULL;
    PyObject *answer = codes;
    if (p->kept) {
        PyObject *list = PyList_New(p->n), *whole = NULL;
        if (list && views && p->slab) whole = PyMemoryView_FromObject((PyObject *)p);
        if (!list || (views && p->slab && !whole)) {
            Py_XDECREF(list);
            Py_DECREF(codes);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < p->n; i++) {
            PyObject *got = Py_None;
            Kept *k = &p->kept[i];
            if (k->buf && whole) {
                Py_ssize_t at = (Py_ssize_t)(k->buf - p->slab);
                PyObject *data = PySequence_GetSlice(whole, at, at + k->len);
                got = data ? Py_BuildValue("(Ny#)", data, (const char *)&k->st, (Py_ssize_t)sizeof(struct stat)) : NULL;
            } else if (k->buf) {
                got = Py_BuildValue("(y#y#)", k->buf, k->len, (const char *)&k->st, (Py_ssize_t)sizeof(struct stat));
            } else {
                Py_INCREF(got);
            }
            if (!got) {
                Py_XDECREF(whole);
                Py_DECREF(list);
                Py_DECREF(codes);
                return NULL;
            }
            PyList_SET_ITEM(list, i, got);
        }
        Py_XDECREF(whole);
        answer = Py_BuildValue("(NN)", codes, list);
    }
    p->answered = 1;
    probe_free(p, views);
    return answer;
}

static PyObject *Probe_result(Probe *p, PyObject *args, PyObject *kwds) {
    int views = 0;
    static char *keywords[] = {"views", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|p", keywords, &views)) return NULL;
    return probe_answer(p, views);
}

static PyObject *Probe_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *items;
    Py_ssize_t budget = 0;
    static char *keywords[] = {"items", "budget", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|n", keywords, &items, &budget)) return NULL;
    Probe *p = (Probe *)type->tp_alloc(type, 0);
    if (!p) return NULL;
    if (probe_setup(p, items, budget) < 0) {
        Py_DECREF(p);
        return NULL;
    }
    return (PyObject *)p;
}

static PyMethodDef probe_methods[] = {
    {"run", (PyCFunction)Probe_run, METH_NOARGS, "Answer items not yet claimed until none is left (any thread)."},
    {"result", (PyCFunction)(void (*)(void))Probe_result, METH_VARARGS | METH_KEYWORDS,
     "The codes (and reads, with a budget; views=True: memoryviews of the probe's copy), once every run() returned."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ProbeType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "musify._cport.Probe",
    .tp_basicsize = sizeof(Probe),
    .tp_dealloc = (destructor)Probe_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The rename probe's look-ups, shared by the threads that call run().",
    .tp_methods = probe_methods,
    .tp_as_buffer = &probe_buffer,
    .tp_new = Probe_new,
};

PyTypeObject *musify_cport_probe_type(void) { return &ProbeType; }

/* `Probe(items, budget)`, run by this thread alone, and its result. */
static PyObject *probe_once(PyObject *items, Py_ssize_t budget) {
    PyObject *args = Py_BuildValue("(On)", items, budget);
    if (!args) return NULL;
    Probe *p = (Probe *)Probe_new(&ProbeType, args, NULL);
    Py_DECREF(args);
    if (!p) return NULL;
    PyObject *answer = NULL, *ran = Probe_run(p, NULL);
    if (ran) {
        Py_DECREF(ran);
        answer = probe_answer(p, 0);
    }
    Py_DECREF(p);
    return answer;
}

PyObject *musify_cport_probe(PyObject *self, PyObject *arg) {
    (void)self;
    return probe_once(arg, 0);
}

PyObject *musify_cport_probe_read(PyObject *self, PyObject *args) {
    PyObject *items;
    Py_ssize_t budget;
    (void)self;
    if (!PyArg_ParseTuple(args, "On", &items, &budget)) return NULL;
    if (budget <= 0) { /* as before: the codes, and no file kept */
        PyObject *codes = probe_once(items, 0);
        if (!codes) return NULL;
        Py_ssize_t n = PyBytes_GET_SIZE(codes);
        PyObject *list = PyList_New(n);
        if (!list) {
            Py_DECREF(codes);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_INCREF(Py_None);
            PyList_SET_ITEM(list, i, Py_None);
        }
        return Py_BuildValue("(NN)", codes, list);
    }
    return probe_once(items, budget);
}
