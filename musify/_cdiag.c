/* A diagnostic's birth in C: what musify/diagnostics.py `_make_from_python` does, in one call.
 *
 * A run of the CUDA toolkit's headers raises 11,650 diagnostics, each through `PassContext.warn`;
 * in Python each one cost a copy of its arguments into a `_Args`, the message formatted, a check
 * of every argument's class and thirteen slot setters (about 2 us). Here the template, split once
 * into literals and argument names, is joined with each argument's `format(value, "")` (what
 * `str.format_map` writes for a bare `{name}`), with no copy of the arguments, and the object is
 * allocated and its slots written directly, as `Diagnostic.__init__` sets them.
 *
 * The Python function stays the reference (and the path under MUSIFY_PURE_PYTHON=1 or without a
 * compiler); tests/test_cdiag_equivalence.py proves both make equal diagnostics. Anything this was
 * not written for (an ID without a fast entry, a spec replaced since, arguments of another class, a
 * non-tuple `end` or `sites`, any error) goes to the reference, so the answer is always its answer.
 *
 * setup(cls, fields, fast, defaults, reference, catalogue) -> None
 *   cls: the Diagnostic class; fields: its slot names in `__init__` order; fast: dict ID ->
 *   (spec, severity, pieces), pieces the template as (literal, argument name, literal, ...,
 *   literal) (diagnostics._pieces: only templates whose every field is a bare name with neither
 *   conversion nor format spec); defaults: what a missing argument reads (one absent from it reads
 *   "?"); reference: the Python function;
 *   catalogue: ID -> spec, the catalogue itself (a fast entry is used only while its spec is
 *   still the catalogue's, so a spec replaced without a new fast entry goes to the reference).
 * make_from(diag_id, path, line, column, name, severity, end, origin, sites, args) -> Diagnostic
 *   the reference's signature and answer. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

enum { ID, SEVERITY, PATH, LINE, COLUMN, MESSAGE, NAME, END_LINE, END_COLUMN, ARGS, ORIGIN, SITES, VERIFY, NFIELDS };

static PyTypeObject *diag_cls;
static Py_ssize_t offsets[NFIELDS];
static PyObject *fast, *defaults, *reference, *catalogue, *empty_str, *question, *name_key;

static PyObject *setup(PyObject *self, PyObject *args) {
    PyObject *cls, *fields, *fast_, *defaults_, *reference_, *catalogue_;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OO!:setup", &PyType_Type, &cls, &PyTuple_Type, &fields, &PyDict_Type, &fast_,
                          &PyDict_Type, &defaults_, &reference_, &PyDict_Type, &catalogue_))
        return NULL;
    if (PyTuple_GET_SIZE(fields) != NFIELDS) {
        PyErr_SetString(PyExc_ValueError, "setup: a Diagnostic has 13 fields");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)cls;
    for (Py_ssize_t i = 0; i < NFIELDS; i++) {
        PyObject *desc = PyDict_GetItemWithError(type->tp_dict, PyTuple_GET_ITEM(fields, i));
        if (!desc) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "setup: a field is not a slot of the class");
            return NULL;
        }
        if (!Py_IS_TYPE(desc, &PyMemberDescr_Type)) {
            PyErr_SetString(PyExc_TypeError, "setup: a field is not a slot");
            return NULL;
        }
        PyMemberDef *m = ((PyMemberDescrObject *)desc)->d_member;
        if (m->type != T_OBJECT_EX || m->offset < (Py_ssize_t)sizeof(PyObject)
            || m->offset + (Py_ssize_t)sizeof(PyObject *) > type->tp_basicsize) {
            PyErr_SetString(PyExc_TypeError, "setup: a field is not an object slot of the class");
            return NULL;
        }
        offsets[i] = m->offset;
    }
    if (type->tp_itemsize || type->tp_dictoffset) {
        PyErr_SetString(PyExc_TypeError, "setup: the class has more than its slots");
        return NULL;
    }
    Py_XSETREF(diag_cls, (PyTypeObject *)Py_NewRef(cls));
    Py_XSETREF(fast, Py_NewRef(fast_));
    Py_XSETREF(defaults, Py_NewRef(defaults_));
    Py_XSETREF(reference, Py_NewRef(reference_));
    Py_XSETREF(catalogue, Py_NewRef(catalogue_));
    Py_RETURN_NONE;
}

static int plain(PyObject *v) {
    return PyUnicode_CheckExact(v) || PyLong_CheckExact(v) || PyFloat_CheckExact(v) || PyBool_Check(v) || v == Py_None;
}

/* what a template argument reads: `name` the parameter, then the caller's arguments, then what
 * `_Args.__missing__` answers (borrowed) */
static PyObject *argument(PyObject *key, PyObject *name, PyObject *args) {
    if (key == name_key || (PyUnicode_GET_LENGTH(key) == 4 && PyUnicode_CompareWithASCIIString(key, "name") == 0))
        return name;
    PyObject *value = PyDict_GetItemWithError(args, key);
    if (value || PyErr_Occurred()) return value;
    value = PyDict_GetItemWithError(defaults, key);
    return value || PyErr_Occurred() ? value : question;
}

/* the template (literal, name, literal, ..., literal) filled in as `format_map` fills it: each
 * argument written as format(value, "") */
static PyObject *message_of(PyObject *pieces, PyObject *name, PyObject *args) {
    Py_ssize_t n = PyTuple_GET_SIZE(pieces);
    if (n == 1) return Py_NewRef(PyTuple_GET_ITEM(pieces, 0));
    PyObject *parts = PyTuple_New(n);
    if (!parts) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *piece = PyTuple_GET_ITEM(pieces, i);
        if (i % 2 == 0) {
            PyTuple_SET_ITEM(parts, i, Py_NewRef(piece));
            continue;
        }
        PyObject *value = argument(piece, name, args);
        if (!value) goto fail;
        value = PyUnicode_CheckExact(value) ? Py_NewRef(value) : PyObject_Format(value, empty_str);
        if (!value) goto fail;
        PyTuple_SET_ITEM(parts, i, value);
    }
    PyObject *message = PyUnicode_Join(empty_str, parts);
    Py_DECREF(parts);
    return message;
fail:
    Py_DECREF(parts);
    return NULL;
}

static PyObject *make_from(PyObject *self, PyObject *const *a, Py_ssize_t n) {
    if (n != 10) {
        PyErr_SetString(PyExc_TypeError, "make_from takes 10 arguments");
        return NULL;
    }
    if (!diag_cls) goto python;
    PyObject *diag_id = a[0], *line = a[2], *column = a[3], *name = a[4], *severity = a[5], *end = a[6],
             *sites = a[8], *args = a[9];
    if (!PyUnicode_CheckExact(diag_id) || !PyDict_CheckExact(args) || !PyTuple_CheckExact(sites)) goto python;
    PyObject *entry = PyDict_GetItemWithError(fast, diag_id);  /* (spec, severity, pieces) */
    if (!entry) goto python;
    PyObject *spec = PyDict_GetItemWithError(catalogue, diag_id);
    if (!spec || spec != PyTuple_GET_ITEM(entry, 0)) goto python;
    PyObject *end_line = line, *end_column = column;
    if (end != Py_None) {
        if (!PyTuple_CheckExact(end) || PyTuple_GET_SIZE(end) != 2) goto python;
        end_line = PyTuple_GET_ITEM(end, 0);
        end_column = PyTuple_GET_ITEM(end, 1);
    }
    if (severity == Py_None) {
        severity = PyTuple_GET_ITEM(entry, 1);
    } else {
        int truth = PyObject_IsTrue(severity);
        if (truth < 0) goto python;
        if (!truth) severity = PyTuple_GET_ITEM(entry, 1);
    }
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(args, &pos, &key, &value))
        if (!plain(value)) goto python;
    PyObject *message = message_of(PyTuple_GET_ITEM(entry, 2), name, args);
    if (!message) goto python;
    PyObject *obj = diag_cls->tp_alloc(diag_cls, 0);
    if (!obj) {
        Py_DECREF(message);
        return NULL;
    }
    PyObject *values[NFIELDS] = {diag_id, severity, a[1], line, column, message, name, end_line, end_column, args,
                                 a[7], sites, empty_str};
    for (int i = 0; i < NFIELDS; i++) *(PyObject **)((char *)obj + offsets[i]) = Py_NewRef(values[i]);
    Py_DECREF(message);
    return obj;
python:
    if (PyErr_Occurred()) PyErr_Clear();  /* the reference raises its own error, if any */
    if (!reference) {
        PyErr_SetString(PyExc_RuntimeError, "make_from: setup() was not called");
        return NULL;
    }
    return PyObject_Vectorcall(reference, a, (size_t)n, NULL);
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "setup(cls, fields, fast, defaults, reference, catalogue) -> None"},
    {"make_from", (PyCFunction)(void (*)(void))make_from, METH_FASTCALL,
     "make_from(diag_id, path, line, column, name, severity, end, origin, sites, args) -> Diagnostic"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cdiag", NULL, -1, methods};

PyMODINIT_FUNC PyInit__cdiag(void) {
    empty_str = PyUnicode_InternFromString("");
    question = PyUnicode_InternFromString("?");
    name_key = PyUnicode_InternFromString("name");
    if (!empty_str || !question || !name_key) return NULL;
    return PyModule_Create(&module);
}
