/* The folders of a tree listed ahead of the walk, by a thread that holds no interpreter lock
 * (musify/discover.py `prefetch`, from the command line as soon as it knows its inputs).
 *
 * prefetch(root) -> Prefetch: starts a thread that opens `root` as the walk opens it, lists
 * each folder with getdents64 into memory (its records as the system gave them, and how the
 * listing ended) and goes down into each subfolder (not ".git", not a link) from its parent's
 * descriptor: the system calls `walk` would make, made while the program imports the engine.
 * `walk(..., prefetched)` reads a folder's entries from there when it was listed ahead, and
 * asks the system itself for any other (a folder listed with an entry of unknown type, one the
 * read-ahead could not open, or past its limit). The walk decides everything else as it always
 * did, on the same records: a tree changed in the milliseconds between the two is seen as it
 * was listed, as one changed just after a walk is.
 *
 * Why: the walk was 16 ms of a 10 MB run's serial start (2,857 folders), 10 of them system
 * calls made while the second core was idle; the command line then imports the engine for
 * about 10 ms before discovery starts. */
#include "_cwalk.h"

#ifdef RAW_LISTING
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PREFETCH_MAX_BYTES (64u << 20) /* records kept at most: a bigger tree's rest is listed by the walk */

typedef struct {
    PyObject_HEAD
    char *root;
    pid_t pid;       /* the process that started the thread (a forked child never joins it) */
    Listed *items;
    size_t n, cap, bytes;
    size_t *slots;   /* open addressing over `items` by relpath (made once the thread is done) */
    size_t n_slots;
    pthread_t thread;
    int started, joined;
    volatile int stop; /* set by the owner, read by the thread between folders */
} Prefetch;

static uint64_t hash_rel(const char *s, size_t n) { /* FNV-1a */
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

/* Keep one folder's listing (taken: `buf`); 0, or -1 when there is no room for its entry. */
static int keep(Prefetch *p, const char *rel, size_t rel_len, char *buf, size_t len, int err) {
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 256;
        Listed *more = realloc(p->items, cap * sizeof(Listed));
        if (!more) return -1;
        p->items = more;
        p->cap = cap;
    }
    char *copy = malloc(rel_len + 1);
    if (!copy) return -1;
    memcpy(copy, rel, rel_len);
    copy[rel_len] = 0;
    p->items[p->n++] = (Listed){copy, rel_len, buf, len, err};
    p->bytes += len + rel_len;
    return 0;
}

/* List the folder open as `fd` (taken: closed here), relpath rel[0:rel_len] (a buffer of
 * WALK_PATH_MAX), then its subfolders, depth first. `scratch` (LISTING_BYTES) takes each
 * getdents64; the folder keeps a copy of just the records it returned. */
static void list_folder(Prefetch *p, int fd, char *rel, size_t rel_len, char *scratch) {
    if (fd < 0) return;
    size_t len = 0;
    char *buf = NULL;
    int err = 0, failed = 0;
    for (;;) {
        long got;
        do {
            got = syscall(SYS_getdents64, fd, scratch, (unsigned long)LISTING_BYTES);
        } while (got < 0 && errno == EINTR);
        if (got <= 0) {
            err = got < 0 ? errno : 0;
            break;
        }
        char *more = realloc(buf, len + (size_t)got);
        if (!more) {
            failed = 1;
            break;
        }
        buf = more;
        memcpy(buf + len, scratch, (size_t)got);
        len += (size_t)got;
    }
    if (failed || (!buf && !err && (buf = malloc(1)) == NULL)) { /* (an empty folder keeps an empty listing) */
        free(buf);
        close(fd);
        return;
    }
    for (size_t pos = 0; buf && !err && pos < len;) { /* an entry of unknown type: the walk asks the system */
        struct raw_dirent *de = (struct raw_dirent *)(buf + pos);
        pos += de->d_reclen;
        if (de->d_type == DT_UNKNOWN) err = LISTED_UNUSABLE;
    }
    if (!buf || p->stop || p->bytes + len > PREFETCH_MAX_BYTES || keep(p, rel, rel_len, buf, len, err) < 0) {
        free(buf);
        close(fd);
        return; /* (not listed: the walk lists it, and what is under it, itself) */
    }
    for (size_t pos = 0; !err && pos < len && !p->stop;) {
        struct raw_dirent *de = (struct raw_dirent *)(buf + pos);
        pos += de->d_reclen;
        const char *name = de->d_name;
        if (de->d_type != DT_DIR || (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0)))
            || strcmp(name, ".git") == 0)
            continue;
        size_t n = strlen(name), sub = rel_len ? rel_len + 1 + n : n;
        if (sub + 1 > WALK_PATH_MAX) continue;
        if (rel_len) rel[rel_len] = '/';
        memcpy(rel + (rel_len ? rel_len + 1 : 0), name, n + 1);
        list_folder(p, openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), rel, sub, scratch);
        rel[rel_len] = 0;
    }
    close(fd);
}

static void *run(void *arg) {
    Prefetch *p = arg;
    char *rel = malloc(WALK_PATH_MAX), *scratch = malloc(LISTING_BYTES);
    if (rel && scratch) {
        rel[0] = 0;
        list_folder(p, open(p->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rel, 0, scratch);
    }
    free(rel);
    free(scratch);
    return NULL;
}

static void join(Prefetch *p) {
    if (p->started && !p->joined && p->pid == getpid()) {
        Py_BEGIN_ALLOW_THREADS
        pthread_join(p->thread, NULL);
        Py_END_ALLOW_THREADS
        p->joined = 1;
    }
}

static void Prefetch_dealloc(Prefetch *p) {
    if (p->started && !p->joined && p->pid == getpid()) {
        p->stop = 1; /* (read by the thread between folders: it ends after the one in hand) */
        join(p);
    }
    if (p->joined || !p->started) {
        for (size_t i = 0; i < p->n; i++) {
            free(p->items[i].rel);
            free(p->items[i].buf);
        }
        free(p->items);
        free(p->slots);
        free(p->root);
    } /* (else a forked child's copy: the parent's thread's memory is left as it is) */
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static PyTypeObject PrefetchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "musify._cwalk.Prefetch",
    .tp_basicsize = sizeof(Prefetch),
    .tp_dealloc = (destructor)Prefetch_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tree's folders listed by a thread ahead of the walk (pass it to walk()).",
};

PyTypeObject *musify_cwalk_prefetch_type(void) { return &PrefetchType; }

PyObject *musify_cwalk_prefetch(PyObject *self, PyObject *root) {
    (void)self;
    PyObject *root_obj;
    if (!PyUnicode_Check(root)) {
        PyErr_SetString(PyExc_TypeError, "prefetch: a root path (str)");
        return NULL;
    }
    if (!PyUnicode_FSConverter(root, &root_obj)) return NULL;
    Prefetch *p = PyObject_New(Prefetch, &PrefetchType);
    if (!p) {
        Py_DECREF(root_obj);
        return NULL;
    }
    p->root = strdup(PyBytes_AS_STRING(root_obj));
    Py_DECREF(root_obj);
    p->pid = getpid();
    p->items = NULL;
    p->n = p->cap = p->bytes = p->n_slots = 0;
    p->slots = NULL;
    p->started = p->joined = p->stop = 0;
    if (!p->root) {
        Py_DECREF(p);
        return PyErr_NoMemory();
    }
    if (pthread_create(&p->thread, NULL, run, p) == 0) p->started = 1; /* (else nothing listed ahead) */
    return (PyObject *)p;
}

int musify_cwalk_prefetch_done(PyObject *pre, PyObject *root) {
    if (!pre || Py_TYPE(pre) != &PrefetchType) return 0;
    Prefetch *p = (Prefetch *)pre;
    PyObject *root_obj;
    if (!PyUnicode_FSConverter(root, &root_obj)) return -1;
    int same = strcmp(PyBytes_AS_STRING(root_obj), p->root) == 0;
    Py_DECREF(root_obj);
    if (!same || !p->started || p->pid != getpid()) return 0;
    join(p);
    if (!p->slots && p->n) {
        size_t n_slots = 16;
        while (n_slots < 2 * p->n) n_slots *= 2;
        size_t *slots = malloc(n_slots * sizeof(size_t));
        if (!slots) return 0;
        for (size_t i = 0; i < n_slots; i++) slots[i] = (size_t)-1;
        for (size_t i = 0; i < p->n; i++) {
            size_t at = hash_rel(p->items[i].rel, p->items[i].rel_len) & (n_slots - 1);
            while (slots[at] != (size_t)-1) at = (at + 1) & (n_slots - 1);
            slots[at] = i;
        }
        p->slots = slots;
        p->n_slots = n_slots;
    }
    return p->slots != NULL;
}

const Listed *musify_cwalk_listed(PyObject *pre, const char *rel, size_t rel_len) {
    Prefetch *p = (Prefetch *)pre;
    if (!p->slots) return NULL;
    size_t at = hash_rel(rel, rel_len) & (p->n_slots - 1);
    while (p->slots[at] != (size_t)-1) {
        const Listed *l = &p->items[p->slots[at]];
        if (l->rel_len == rel_len && memcmp(l->rel, rel, rel_len) == 0) return l;
        at = (at + 1) & (p->n_slots - 1);
    }
    return NULL;
}

#else /* no raw listing here: nothing is listed ahead */

PyObject *musify_cwalk_prefetch(PyObject *self, PyObject *root) {
    (void)self;
    (void)root;
    Py_RETURN_NONE;
}

PyTypeObject *musify_cwalk_prefetch_type(void) { return NULL; }

#endif
