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
#include "_cport.h"
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
int musify_cport_port_calls(const char *tmp, const char *dst, const char *buf, Py_ssize_t left, int first_mode,
                            int mode, long uid, long gid, int *err, const char **failed) {
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
    fd = musify_cport_port_calls(tmp, dst, data.buf, data.len, first_mode, mode, uid, gid, &err, &failed);
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
int musify_cport_make_folder(char *path, char **made, int *n_made, int max_made) {
    int got = make_one(path, made, n_made, max_made);
    if (got >= 0 || errno != ENOENT) return got;
    char *slash = strrchr(path, '/');
    if (!slash || slash == path) {
        errno = ENOENT;
        return -1;
    }
    *slash = '\0';
    int parent = musify_cport_make_folder(path, made, n_made, max_made);
    *slash = '/';
    return parent < 0 ? -1 : make_one(path, made, n_made, max_made);
}


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
                int got = musify_cport_make_folder(PyBytes_AS_STRING(p->folder), made, &n_made, max_made);
                p->folder_state = got > 0 ? FOLDER_MADE : got == 0 ? FOLDER_THERE : FOLDER_FAILED;
            }
            if (p->folder_state != FOLDER_MADE) { /* the caller looks (and reports a failure) itself */
                p->answer = -3;
                continue;
            }
        }
        p->answer = musify_cport_port_calls(PyBytes_AS_STRING(p->tmp), PyBytes_AS_STRING(p->dst), p->data.buf, p->data.len,
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

static PyMethodDef methods[] = {
    {"put", put, METH_VARARGS, "Write one port and rename it into place, without the interpreter's lock."},
    {"put_batch", put_batch, METH_O, "Write ports in order (making their folders), the lock given away once."},
    {"put_ports", musify_cport_put_ports, METH_VARARGS, "Write the writer thread's queued ports from `start` until one needs Python."},
    {"probe", musify_cport_probe, METH_O, "Per (target, source): 1 target exists, 2 source is binary, 0 neither, 3 ask Python."},
    {"probe_read", musify_cport_probe_read, METH_VARARGS, "probe, and the files it read whole (bytes, stat) within a budget."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cport", NULL, -1, methods};

PyMODINIT_FUNC PyInit__cport(void) {
    PyTypeObject *probe_type = musify_cport_probe_type();
    if (PyType_Ready(probe_type) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(probe_type);
    if (PyModule_AddObject(m, "Probe", (PyObject *)probe_type) < 0) {
        Py_DECREF(probe_type);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
