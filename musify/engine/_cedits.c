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
 * merge_rows(rows) -> (rows, -1, -1, -1) | (None, kind, i, j) | None: the rows sorted by (start, end)
 *   (stable) and checked as `merge` checks them: a new array of the same type code with the
 *   rows in order; or the first problem in that order, kind 0 a negative span at row i, kind 1
 *   rows i and j overlapping (the caller raises as the Python does); None when two rows share a
 *   span (the Python orders those by their fields and collapses duplicates).
 * apply(text, rows, fields) -> str | None: `text` with each row's span replaced by
 *   fields[index][0]; None (the caller takes the Python path) unless the spans are in order
 *   inside the text and every replacement is a str, so the answer is always the Python one. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

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

typedef struct {
    long long s, e;
    Py_ssize_t i;
} Key;

static int key_less(const Key *a, const Key *b) { return a->s < b->s || (a->s == b->s && a->e < b->e); }

/* a stable merge sort of `k` (n items) using `tmp` */
static void sort_keys(Key *k, Key *tmp, Py_ssize_t n) {
    for (Py_ssize_t width = 1; width < n; width *= 2) {
        for (Py_ssize_t lo = 0; lo < n; lo += 2 * width) {
            Py_ssize_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            Py_ssize_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi) tmp[o++] = key_less(&k[b], &k[a]) ? k[b++] : k[a++];
            while (a < mid) tmp[o++] = k[a++];
            while (b < hi) tmp[o++] = k[b++];
        }
        memcpy(k, tmp, (size_t)n * sizeof(Key));
    }
}

static PyObject *merge_rows(PyObject *self, PyObject *arg) {
    Rows r;
    if (rows_open(arg, &r) < 0) return NULL;
    Py_ssize_t n = r.n / 3;
    PyObject *result = NULL;
    Key *keys = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Key)), *tmp = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Key));
    if (!keys || !tmp) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        keys[k].s = rows_get(&r, 3 * k);
        keys[k].e = rows_get(&r, 3 * k + 1);
        keys[k].i = k;
    }
    sort_keys(keys, tmp, n);
    for (Py_ssize_t k = 0; k + 1 < n; k++)
        if (keys[k].s == keys[k + 1].s && keys[k].e == keys[k + 1].e) {
            result = Py_NewRef(Py_None);
            goto done;
        }
    long long prev_end = -1;  /* as the Python starts: a start below -1 "overlaps" row -1 */
    Py_ssize_t prev = -1;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (keys[k].s > keys[k].e) {
            result = Py_BuildValue("(Oinn)", Py_None, 0, keys[k].i, (Py_ssize_t)-1);
            goto done;
        }
        if (keys[k].s < prev_end) {
            result = Py_BuildValue("(Oinn)", Py_None, 1, prev, keys[k].i);
            goto done;
        }
        prev_end = keys[k].e;
        prev = keys[k].i;
    }
    /* the sorted rows, in a new array of the same type code (array.array(typecode, bytes)) */
    {
        PyObject *array_mod = PyImport_ImportModule("array");
        if (!array_mod) goto done;
        Py_ssize_t size = r.view.itemsize;
        PyObject *bytes = PyBytes_FromStringAndSize(NULL, 3 * n * size);
        if (!bytes) {
            Py_DECREF(array_mod);
            goto done;
        }
        char *out = PyBytes_AS_STRING(bytes);
        for (Py_ssize_t k = 0; k < n; k++)
            memcpy(out + 3 * k * size, (const char *)r.view.buf + 3 * keys[k].i * size, (size_t)(3 * size));
        PyObject *rows = PyObject_CallMethod(array_mod, "array", "sO", r.wide ? "q" : "i", bytes);
        Py_DECREF(array_mod);
        Py_DECREF(bytes);
        if (!rows) goto done;
        result = Py_BuildValue("(Ninn)", rows, -1, (Py_ssize_t)-1, (Py_ssize_t)-1);
    }
done:
    PyMem_Free(keys);
    PyMem_Free(tmp);
    PyBuffer_Release(&r.view);
    return result;
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
    {"merge_rows", merge_rows, METH_O, "merge_rows(rows) -> the rows in order, or the first problem, or None"},
    {"apply", apply, METH_VARARGS, "apply(text, rows, fields) -> str | None: the edited text"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cedits", NULL, -1, methods};

PyMODINIT_FUNC PyInit__cedits(void) { return PyModule_Create(&module); }
