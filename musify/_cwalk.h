/* What `_cwalk`'s two parts share: the walk (musify/_cwalk.c) and the listings read ahead of it
 * (musify/_cwalk_prefetch.c). */
#ifndef MUSIFY_CWALK_H
#define MUSIFY_CWALK_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#if defined(__linux__)
#include <stdint.h>
#include <sys/syscall.h>
#endif

#define WALK_PATH_MAX 8192
/* Linux: a folder is listed with getdents64 on the descriptor its parent opened, not through
 * fdopendir, which asks the system three more times a folder (an fstat for its buffer size, a
 * fcntl F_GETFL, a fcntl F_SETFD that the O_CLOEXEC of the open already did): on 2,000 folders
 * 6,000 system calls of the run's critical path. The entries and their d_type are the same. */
#if defined(__linux__) && defined(SYS_getdents64)
#define RAW_LISTING 1
#define LISTING_BYTES 32768
struct raw_dirent {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* One folder as the read-ahead listed it: its getdents64 records, one after another, and how
 * the listing ended (0: read to its end; else the errno of a failed read). */
typedef struct {
    char *rel;     /* the folder's relpath under the root ("" for the root) */
    size_t rel_len;
    char *buf;     /* the records */
    size_t len;
    int err;
} Listed;

/* a listing the walk does not read from memory: one with an entry of unknown type (the walk
 * asks the system about it through the folder's descriptor) */
#define LISTED_UNUSABLE (-1)

/* The listing of the folder `rel` under the prefetch `pre` (from `prefetch_done`), or NULL:
 * not listed ahead (the walk asks the system). */
const Listed *musify_cwalk_listed(PyObject *pre, const char *rel, size_t rel_len);
/* `pre` as a prefetch of `root` (a str) whose thread is done (waited for, without the GIL):
 * 1, 0 when it is not one of that root (or ran in another process), -1 with an error set. */
int musify_cwalk_prefetch_done(PyObject *pre, PyObject *root);
#endif

PyObject *musify_cwalk_prefetch(PyObject *self, PyObject *root);
PyTypeObject *musify_cwalk_prefetch_type(void);

#endif
