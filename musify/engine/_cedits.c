/* The merge's order check and the apply of an `EditList` in C (musify/engine/edits.py).
 *
 * Every file's edits pass through both once; in Python they were two generator loops a file and
 * a list of pieces joined at the end, most of the merge and apply time on small files. The
 * Python code in edits.py stays the reference (and the path under MUSIFY_PURE_PYTHON=1 or
 * without a compiler); tests/test_cedits_equivalence.py proves both give the same answers.
 *
 * in_order(rows) -> bool: rows is an `EditList`'s array (start, end, field index per row); true
 *   when every start <= end and each edit ends at or before the next starts and differs from it
 *   (s0 < s1 or e0 < e1): the edits are merged as they are.
 * apply(text, rows, fields) -> str | None: `text` with each row's span replaced by
 *   fields[index][0]; None (the caller takes the Python path) unless the spans are in order
 *   inside the text and every replacement is a str, so the answer is always the Python one. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

typedef struct {
    Py_buffer view;
    Py_ssize_t n;  /* values */
    int wide;      /* 8-byte values */
} Rows;

static int rows_open(PyObject *obj, Rows *r) {
    if (PyObject_GetBuffer(obj, &r->view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return -1;
    const char *f = r->view.format ? r->view.format : "B";
    if (r->view.itemsize == 4 && (f[0] == 'i' || f[0] == 'l') && f[1] == 0) {
        r->wide = 0;
    } else if (r->view.itemsize == 8 && (f[0] == 'q' || f[0] == 'l') && f[1] == 0) {
        r->wide = 1;
    } else {
        PyBuffer_Release(&r->view);
        PyErr_SetString(PyExc_TypeError, "rows must be an array of 4- or 8-byte signed integers");
        return -1;
    }
    r->n = r->view.len / r->view.itemsize;
    return 0;
}

static inline long long rows_get(const Rows *r, Py_ssize_t i) {
    return r->wide ? ((const long long *)r->view.buf)[i] : (long long)((const int *)r->view.buf)[i];
}

static PyObject *in_order(PyObject *self, PyObject *arg) {
    Rows r;
    if (rows_open(arg, &r) < 0) return NULL;
    int ok = 1;
    Py_ssize_t rows = r.n / 3;
    for (Py_ssize_t k = 0; k < rows && ok; k++) {
        long long s = rows_get(&r, 3 * k), e = rows_get(&r, 3 * k + 1);
        if (s > e) ok = 0;
        else if (k + 1 < rows) {
            long long s1 = rows_get(&r, 3 * k + 3), e1 = rows_get(&r, 3 * k + 4);
            if (!(e <= s1 && (s < s1 || e < e1))) ok = 0;
        }
    }
    PyBuffer_Release(&r.view);
    return PyBool_FromLong(ok);
}

static PyObject *apply(PyObject *self, PyObject *args) {
    PyObject *text, *rows_obj, *fields;
    if (!PyArg_ParseTuple(args, "UOO!:apply", &text, &rows_obj, &PyList_Type, &fields)) return NULL;
    Rows r;
    if (rows_open(rows_obj, &r) < 0) return NULL;
    Py_ssize_t len = PyUnicode_GET_LENGTH(text), nfields = PyList_GET_SIZE(fields), rows = r.n / 3;
    Py_UCS4 maxchar = PyUnicode_MAX_CHAR_VALUE(text);
    Py_ssize_t out_len = len, pos = 0;
    PyObject *result = NULL;
    /* first pass: check the spans and replacements, size the result */
    for (Py_ssize_t k = 0; k < rows; k++) {
        long long s = rows_get(&r, 3 * k), e = rows_get(&r, 3 * k + 1), f = rows_get(&r, 3 * k + 2);
        if (s < pos || e < s || e > len || f < 0 || f >= nfields) goto fallback;
        PyObject *fs = PyList_GET_ITEM(fields, (Py_ssize_t)f);
        if (!PyTuple_Check(fs) || PyTuple_GET_SIZE(fs) < 1 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(fs, 0)))
            goto fallback;
        PyObject *rep = PyTuple_GET_ITEM(fs, 0);
        Py_UCS4 m = PyUnicode_MAX_CHAR_VALUE(rep);
        if (m > maxchar) maxchar = m;
        out_len += PyUnicode_GET_LENGTH(rep) - (Py_ssize_t)(e - s);
        pos = (Py_ssize_t)e;
    }
    if (PyUnicode_MAX_CHAR_VALUE(text) > 127) {
        /* the kept text's widest character is not known without reading it: let join find the
         * result's (a str is always stored in the narrowest kind that holds its characters) */
        PyObject *parts = PyList_New(0), *piece;
        if (!parts) goto done;
        pos = 0;
        for (Py_ssize_t k = 0; k <= rows; k++) {
            Py_ssize_t s = k < rows ? (Py_ssize_t)rows_get(&r, 3 * k) : len;
            piece = PyUnicode_Substring(text, pos, s);
            if (!piece || PyList_Append(parts, piece) < 0) {
                Py_XDECREF(piece);
                Py_DECREF(parts);
                goto done;
            }
            Py_DECREF(piece);
            if (k == rows) break;
            if (PyList_Append(parts, PyTuple_GET_ITEM(PyList_GET_ITEM(fields, (Py_ssize_t)rows_get(&r, 3 * k + 2)),
                                                      0)) < 0) {
                Py_DECREF(parts);
                goto done;
            }
            pos = (Py_ssize_t)rows_get(&r, 3 * k + 1);
        }
        PyObject *empty = PyUnicode_FromStringAndSize("", 0);
        if (empty) result = PyUnicode_Join(empty, parts);
        Py_XDECREF(empty);
        Py_DECREF(parts);
        goto done;
    }
    /* an ASCII text: the result's widest character is the widest replacement's (or ASCII) */
    result = PyUnicode_New(out_len, maxchar);
    if (!result) goto done;
    Py_ssize_t at = 0;
    pos = 0;
    for (Py_ssize_t k = 0; k < rows; k++) {
        Py_ssize_t s = (Py_ssize_t)rows_get(&r, 3 * k), e = (Py_ssize_t)rows_get(&r, 3 * k + 1);
        PyObject *rep = PyTuple_GET_ITEM(PyList_GET_ITEM(fields, (Py_ssize_t)rows_get(&r, 3 * k + 2)), 0);
        Py_ssize_t n = PyUnicode_GET_LENGTH(rep);
        if (s > pos && PyUnicode_CopyCharacters(result, at, text, pos, s - pos) < 0) goto fail;
        at += s - pos;
        if (n && PyUnicode_CopyCharacters(result, at, rep, 0, n) < 0) goto fail;
        at += n;
        pos = e;
    }
    if (len > pos && PyUnicode_CopyCharacters(result, at, text, pos, len - pos) < 0) goto fail;
    goto done;
fail:
    Py_CLEAR(result);
    goto done;
fallback:
    result = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&r.view);
    return result;
}

static PyMethodDef methods[] = {
    {"in_order", in_order, METH_O, "in_order(rows) -> bool: the edits are merged as they are"},
    {"apply", apply, METH_VARARGS, "apply(text, rows, fields) -> str | None: the edited text"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cedits", NULL, -1, methods};

PyMODINIT_FUNC PyInit__cedits(void) { return PyModule_Create(&module); }
