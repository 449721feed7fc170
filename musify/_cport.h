/* The parts of the `_cport` module (musify/_cport.c) that live in their own file: the rename
 * probe (musify/_cport_probe.c) and the queued ports' writer (musify/_cport_ports.c). */
#ifndef MUSIFY_CPORT_H
#define MUSIFY_CPORT_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* musify/_cport.c: one port's system calls (see `put`), and one folder made with its parents */
int musify_cport_port_calls(const char *tmp, const char *dst, const char *buf, Py_ssize_t left, int first_mode,
                            int mode, long uid, long gid, int *err, const char **failed);
int musify_cport_make_folder(char *path, char **made, int *n_made, int max_made);
enum { FOLDER_MADE = 1, FOLDER_THERE = 2, FOLDER_FAILED = 3 };

/* musify/_cport_ports.c */
PyObject *musify_cport_put_ports(PyObject *self, PyObject *args);

/* musify/_cport_probe.c */
PyObject *musify_cport_probe(PyObject *self, PyObject *arg);
PyObject *musify_cport_probe_read(PyObject *self, PyObject *args);
PyTypeObject *musify_cport_probe_type(void);

#endif
