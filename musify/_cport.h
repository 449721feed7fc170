/* The parts of the `_cport` module (musify/_cport.c) that live in their own file: the rename
 * probe (musify/_cport_probe.c). */
#ifndef MUSIFY_CPORT_H
#define MUSIFY_CPORT_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>

PyObject *musify_cport_probe(PyObject *self, PyObject *arg);
PyObject *musify_cport_probe_read(PyObject *self, PyObject *args);
PyTypeObject *musify_cport_probe_type(void);

#endif
