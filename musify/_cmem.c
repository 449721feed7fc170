/* The run's new memory faulted in by a second thread, ahead of the thread that migrates.
 *
 * Why: a -j1 run of the replicated corpus (4,928 files) grows by about 40 MB after its start-up
 * (each file's result is kept for the record) and takes some 15,000 page faults on the
 * migrating thread, 3-4 us each on this machine's virtual machine: about a tenth of the run's
 * wall time spent in the kernel, on the one thread everything waits for, while the other core
 * idles. The memory is needed; only where its faults are taken can change.
 *
 * How: the two allocators that hand the interpreter its new memory are fed from memory another
 * thread has already faulted in (`madvise(MADV_POPULATE_WRITE)`, which maps the pages as a write
 * would without writing anything, so it is safe on memory already in use):
 *   - pymalloc's arenas (every object of up to 512 bytes): an arena allocator
 *     (`PyObject_SetArenaAllocator`, public API) that hands out 1 MiB arenas in order from one
 *     reserved range, the next AHEAD_ARENAS of them kept populated; an arena pymalloc gives back
 *     is handed out again before a new one (the last SPARE given back keep their pages, the
 *     others are returned to the system); an arena of another size, or one asked after the range
 *     is used up, comes from the previous allocator, which also takes back its own;
 *   - glibc's main heap (bigger objects): grown by at least HEAP_PAD at a time (`M_TOP_PAD`),
 *     and each growth populated as soon as the thread sees the break move.
 * The thread polls (every POLL_US microseconds while memory grows, backing off to IDLE_POLL_US
 * while it does not) rather than being signalled, so the allocation paths take no lock and a
 * forked child (a -j worker), which has no such thread, allocates as before from what it
 * inherited.
 *
 * start() -> bool: installs both and starts the thread; False (nothing changed) where the
 *   kernel lacks MADV_POPULATE_WRITE (Linux < 5.14), the range cannot be reserved, or it was
 *   started already. stop(): ends the thread (the allocator stays: arenas it handed out are
 *   still in use). Only the musify program calls it (musify/prefault.py), never a library user's
 *   process; elsewhere than 64-bit Linux with glibc both are there and answer False. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if defined(__linux__) && defined(__GLIBC__) && SIZEOF_VOID_P == 8 && !defined(Py_GIL_DISABLED)
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#define CMEM_SUPPORTED 1
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#endif

#ifdef CMEM_SUPPORTED

#define ARENA ((size_t)1 << 20)            /* pymalloc's arena on 64-bit CPython 3.10-3.13 */
#define RANGE ((size_t)4 << 30)            /* address space reserved for arenas (not memory) */
#define AHEAD_ARENAS 4                     /* arenas kept populated ahead of the next request */
#define HEAP_PAD ((size_t)8 << 20)         /* glibc's main heap grows by at least this much */
#define SPARE 8                            /* given-back arenas kept populated; the rest released */
#define POLL_US 250                        /* between polls while the memory grows */
#define IDLE_POLL_US 20000                 /* at most, while it does not */

static PyObjectArenaAllocator previous;
static char *range_start;
static _Atomic size_t handed;              /* bytes of the range handed out (written with the GIL) */
static void *back[RANGE / ARENA];          /* arenas given back, reused last first (only with the GIL) */
static size_t given_back;
static _Atomic int stopping;
static int running;
static pthread_t thread;

static void *arena_alloc(void *ctx, size_t size) {
    (void)ctx;
    if (size == ARENA) {
        if (given_back > 0) {
            return back[--given_back];
        }
        size_t at = atomic_load_explicit(&handed, memory_order_relaxed);
        if (at + ARENA <= RANGE) {
            atomic_store_explicit(&handed, at + ARENA, memory_order_release);
            return range_start + at;
        }
    }
    return previous.alloc(previous.ctx, size);
}

static void arena_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    char *p = (char *)ptr;
    if (p >= range_start && p < range_start + RANGE) {
        /* (every arena of the range: the stack never holds more than the range has) */
        if (given_back >= SPARE) {
            madvise(ptr, ARENA, MADV_DONTNEED);  /* its memory back to the system, its place kept */
        }
        back[given_back++] = ptr;
        return;
    }
    previous.free(previous.ctx, ptr, size);
}

static uintptr_t page_up(uintptr_t p) { return (p + 4095) & ~(uintptr_t)4095; }

static void *populate_ahead(void *unused) {
    (void)unused;
    size_t populated = 0;
    uintptr_t heap_done = page_up((uintptr_t)syscall(SYS_brk, 0));
    long nap_us = POLL_US;
    while (!atomic_load_explicit(&stopping, memory_order_acquire)) {
        int worked = 0;
        size_t want = atomic_load_explicit(&handed, memory_order_acquire) + AHEAD_ARENAS * ARENA;
        if (want > RANGE) {
            want = RANGE;
        }
        if (populated < want) {
            madvise(range_start + populated, want - populated, MADV_POPULATE_WRITE);
            populated = want;
            worked = 1;
        }
        uintptr_t brk_now = page_up((uintptr_t)syscall(SYS_brk, 0));
        if (brk_now > heap_done) {
            madvise((void *)heap_done, brk_now - heap_done, MADV_POPULATE_WRITE);
            worked = 1;
        }
        heap_done = brk_now;  /* (a trimmed heap: its next growth is populated from the new break) */
        /* polled often while the memory grows, ever less often while it does not (a process
         * that waits on compilers, or on a user, is not woken thousands of times a second) */
        nap_us = worked ? POLL_US : (nap_us * 2 > IDLE_POLL_US ? IDLE_POLL_US : nap_us * 2);
        struct timespec nap = {nap_us / 1000000L, (nap_us % 1000000L) * 1000L};
        nanosleep(&nap, NULL);
    }
    return NULL;
}

static void forked_child(void) { running = 0; }  /* the thread is not copied into a child */

static PyObject *cmem_start(PyObject *self, PyObject *unused) {
    (void)self; (void)unused;
    if (running || range_start != NULL) {
        Py_RETURN_FALSE;
    }
    char *probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe == MAP_FAILED) {
        Py_RETURN_FALSE;
    }
    int works = madvise(probe, 4096, MADV_POPULATE_WRITE) == 0;
    munmap(probe, 4096);
    if (!works) {
        Py_RETURN_FALSE;
    }
    char *got = mmap(NULL, RANGE + ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (got == MAP_FAILED) {
        Py_RETURN_FALSE;
    }
    /* arenas aligned to their size, as pymalloc's own mmap'd ones mostly are (none lost to alignment) */
    char *aligned = (char *)(((uintptr_t)got + ARENA - 1) & ~(uintptr_t)(ARENA - 1));
    if (aligned > got) {
        munmap(got, (size_t)(aligned - got));
    }
    munmap(aligned + RANGE, (size_t)(got + RANGE + ARENA - aligned - RANGE));
    range_start = aligned;
    mallopt(M_TOP_PAD, (int)HEAP_PAD);
    atomic_store(&stopping, 0);
    if (pthread_create(&thread, NULL, populate_ahead, NULL) != 0) {
        munmap(range_start, RANGE);
        range_start = NULL;
        Py_RETURN_FALSE;
    }
    running = 1;
    pthread_atfork(NULL, NULL, forked_child);
    PyObjectArenaAllocator mine = {NULL, arena_alloc, arena_free};
    PyObject_GetArenaAllocator(&previous);
    PyObject_SetArenaAllocator(&mine);
    Py_RETURN_TRUE;
}

static PyObject *cmem_stop(PyObject *self, PyObject *unused) {
    (void)self; (void)unused;
    if (!running) {
        Py_RETURN_FALSE;
    }
    atomic_store_explicit(&stopping, 1, memory_order_release);
    Py_BEGIN_ALLOW_THREADS
    pthread_join(thread, NULL);
    Py_END_ALLOW_THREADS
    running = 0;
    Py_RETURN_TRUE;
}

#else

static PyObject *cmem_start(PyObject *self, PyObject *unused) {
    (void)self; (void)unused;
    Py_RETURN_FALSE;
}

static PyObject *cmem_stop(PyObject *self, PyObject *unused) {
    (void)self; (void)unused;
    Py_RETURN_FALSE;
}

#endif

static PyMethodDef methods[] = {
    {"start", cmem_start, METH_NOARGS, "Feed the interpreter's new memory from pages a second thread faults in."},
    {"stop", cmem_stop, METH_NOARGS, "End the thread that faults the pages in (the allocator stays)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cmem", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__cmem(void) { return PyModule_Create(&module); }
