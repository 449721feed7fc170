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
#include <sys/stat.h>
#include <unistd.h>

#ifndef O_NOFOLLOW
#define O_NOFOLLOW 0
#endif
#ifndef O_CLOEXEC
#define O_CLOEXEC 0
#endif

static PyObject *put(PyObject *self, PyObject *args) {
    PyObject *tmp_obj = NULL, *dst_obj = NULL;
    Py_buffer data;
    int first_mode, mode;
    long uid, gid;
    (void)self;
    if (!PyArg_ParseTuple(args, "O&O&y*iill", PyUnicode_FSConverter, &tmp_obj, PyUnicode_FSConverter, &dst_obj,
                          &data, &first_mode, &mode, &uid, &gid)) {
        Py_XDECREF(tmp_obj);
        Py_XDECREF(dst_obj);
        return NULL;
    }
    const char *tmp = PyBytes_AS_STRING(tmp_obj), *dst = PyBytes_AS_STRING(dst_obj);
    const char *buf = data.buf;
    Py_ssize_t left = data.len;
    int fd, err = 0, keep_open = 0, taken = 0;
    const char *failed = tmp;
    struct stat st;
    Py_BEGIN_ALLOW_THREADS
    do {
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, (mode_t)first_mode);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        err = errno;
        taken = err == EEXIST;
    } else {
        while (left > 0) {
            ssize_t n = write(fd, buf, (size_t)left);
            if (n < 0) {
                if (errno == EINTR) continue;
                err = errno;
                break;
            }
            buf += n;
            left -= n;
        }
        if (!err && fstat(fd, &st) != 0) err = errno;
        if (!err && ((int)(st.st_mode & 07777) != mode ||
                     (uid != -1 && ((long)st.st_uid != uid || (long)st.st_gid != gid)))) {
            keep_open = 1;  /* the caller sets the mode and owner through it */
        }
        if (err || !keep_open) {
            if (close(fd) != 0 && !err && errno != EINTR) err = errno;
            fd = -1;
        }
        if (!err && !keep_open && rename(tmp, dst) != 0) {
            err = errno;
            failed = dst;
        }
        if (err) unlink(tmp);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    if (taken) {  /* nothing was created */
        Py_DECREF(tmp_obj);
        Py_DECREF(dst_obj);
        return PyLong_FromLong(-2);
    }
    if (err) {
        errno = err;
        PyObject *name = PyUnicode_DecodeFSDefault(failed);
        if (name) {
            PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, name);
            Py_DECREF(name);
        }
        Py_DECREF(tmp_obj);
        Py_DECREF(dst_obj);
        return NULL;
    }
    Py_DECREF(tmp_obj);
    Py_DECREF(dst_obj);
    return PyLong_FromLong(keep_open ? fd : -1);
}

static PyMethodDef methods[] = {
    {"put", put, METH_VARARGS, "Write one port and rename it into place, without the interpreter's lock."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cport", NULL, -1, methods};

PyMODINIT_FUNC PyInit__cport(void) { return PyModule_Create(&module); }
