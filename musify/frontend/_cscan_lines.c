/* The line table of `LineIndex` (musify/frontend/lines.py) in C: where the lines start, and the
 * (line, column) of the identifier pass's unrecognised names without that table. Part of the
 * `_cscan` extension (`_cscan.c` defines the module). */
#include "_cscan.h"
#include "../_cnewlines.h"

/* line_starts(text) -> [0, offset after each newline...]: LineIndex's table */
PyObject *musify_cscan_line_starts(PyObject *Py_UNUSED(self), PyObject *arg) {
    if (!PyUnicode_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "line_starts: expected str");
        return NULL;
    }
    int kind = PyUnicode_KIND(arg);
    const void *data = PyUnicode_DATA(arg);
    Py_ssize_t n = PyUnicode_GET_LENGTH(arg), count = 1;
    if (kind == PyUnicode_1BYTE_KIND) {
        const char *c = data, *end = c + n;
        while ((c = memchr(c, '\n', (size_t)(end - c))) != NULL) { count++; c++; }
    } else {
        for (Py_ssize_t i = 0; i < n; i++) count += PyUnicode_READ(kind, data, i) == '\n';
    }
    PyObject *out = PyList_New(count);
    if (!out) return NULL;
    Py_ssize_t k = 0;
    PyObject *zero = PyLong_FromLong(0);
    if (!zero) { Py_DECREF(out); return NULL; }
    PyList_SET_ITEM(out, k++, zero);
    if (kind == PyUnicode_1BYTE_KIND) {
        const char *start = data, *c = start, *end = c + n;
        while (k < count && (c = memchr(c, '\n', (size_t)(end - c))) != NULL) {
            PyObject *v = PyLong_FromSsize_t(++c - start);
            if (!v) { Py_DECREF(out); return NULL; }
            PyList_SET_ITEM(out, k++, v);
        }
        return out;
    }
    for (Py_ssize_t i = 0; i < n && k < count; i++) {
        if (PyUnicode_READ(kind, data, i) != '\n') continue;
        PyObject *v = PyLong_FromSsize_t(i + 1);
        if (!v) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, k++, v);
    }
    return out;
}

/* the newlines in [from, to) of the text */
static Py_ssize_t newlines(const Text *t, Py_ssize_t from, Py_ssize_t to, Py_ssize_t *last) {
    Py_ssize_t count = 0;
    if (t->kind == PyUnicode_1BYTE_KIND) {  /* counted sixteen at a time, the last found backwards */
        if (to <= from) return 0;
        const unsigned char *base = t->data;
        count = musify_newlines_1(base + from, to - from);
        if (count) *last = (const unsigned char *)memrchr(base + from, '\n', (size_t)(to - from)) - base;
        return count;
    }
    for (Py_ssize_t i = from; i < to; i++)
        if (CH(t, i) == '\n') {
            count++;
            *last = i;
        }
    return count;
}

/* named_positions(text, named) -> [(name, line, column)...] for each (offset, name) of `named`, a
 * list (LineIndex.named_positions, whose bisection over the line starts is the reference): the
 * newlines counted from one offset to the next, so the file's line table is not needed (offsets
 * in order, as the identifier pass hands them; one before the last starts the count again from
 * the top). None, for the caller's Python, for anything else than a 2-tuple of a non-negative int
 * and any object. */
PyObject *musify_cscan_named_positions(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *named;
    if (!PyArg_ParseTuple(args, "UO!:named_positions", &text, &PyList_Type, &named)) return NULL;
    Text t = {PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), text};
    Py_ssize_t n = PyList_GET_SIZE(named);
    PyObject *out = PyList_New(n);
    if (!out) return NULL;
    Py_ssize_t at = 0, line = 1, nl = -1;  /* the text before `at` read: `line` lines, the last newline at `nl` */
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *item = PyList_GET_ITEM(named, k);
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2 || !PyLong_CheckExact(PyTuple_GET_ITEM(item, 0))) {
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        Py_ssize_t offset = PyLong_AsSsize_t(PyTuple_GET_ITEM(item, 0));
        if (offset < 0) {
            Py_DECREF(out);
            if (PyErr_Occurred()) PyErr_Clear();  /* too big for a Py_ssize_t: Python's answer */
            Py_RETURN_NONE;
        }
        Py_ssize_t to = offset < t.n ? offset : t.n;
        if (to < at) {
            at = 0;
            line = 1;
            nl = -1;
        }
        line += newlines(&t, at, to, &nl);
        at = to;
        PyObject *items[3] = {Py_NewRef(PyTuple_GET_ITEM(item, 1)), PyLong_FromSsize_t(line),
                              PyLong_FromSsize_t(offset - nl)};
        PyObject *row = make_tuple(NULL, items, 3);
        if (!row) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, k, row);
    }
    return out;
}
