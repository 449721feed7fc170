/* The identifier pass's helpers in C (musify/passes/identifiers.py has each one in Python too):
 * the plain-rename loop, the "previous token" look-back of the unknown-name checks, and the line
 * table of `LineIndex`. Part of the `_cscan` extension (`_cscan.c` defines the module). */
#include "_cscan.h"

/* renames(idents, fast, skip, migrated_mask, Edit) -> (edits, rest): the identifier pass's hot
 * loop. For each identifier whose context bit is in `migrated_mask`: when `fast` (name ->
 * (replacement, rule, library, kind, inferred)) has its name, an Edit(start, end, *fields); when
 * (`fields` holds every Edit field after the span); when `skip` (a set) has it, nothing (the pass would do nothing with it); otherwise it goes to `rest`,
 * in order, for the Python pass (rules with diagnostics, qualified names, unknown vendor names).
 * Identifiers in other contexts are dropped, as the pass does. */
PyObject *musify_cscan_renames(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *idents, *fast, *skip, *edit_type;
    long mask;
    if (!PyArg_ParseTuple(args, "O!O!O!lO!:renames", &PyList_Type, &idents, &PyDict_Type, &fast, &PySet_Type,
                          &skip, &mask, &PyType_Type, &edit_type))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)edit_type, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "renames: Edit must be a tuple type");
        return NULL;
    }
    PyObject *field_names = PyObject_GetAttrString(edit_type, "_fields");
    if (!field_names) return NULL;
    Py_ssize_t nfields = PyObject_Length(field_names);
    Py_DECREF(field_names);
    if (nfields < 2 || nfields > 16) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "renames: Edit must have 2 to 16 fields");
        return NULL;
    }
    PyObject *edits = PyList_New(0), *rest = PyList_New(0);
    if (!edits || !rest) goto fail;
    Py_ssize_t n = PyList_GET_SIZE(idents);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *id = PyList_GET_ITEM(idents, i);
        if (!PyTuple_Check(id) || PyTuple_GET_SIZE(id) != 4) {
            PyErr_SetString(PyExc_TypeError, "renames: identifiers must be Ident tuples");
            goto fail;
        }
        long ctx = PyLong_AsLong(PyTuple_GET_ITEM(id, 3));
        if (ctx == -1 && PyErr_Occurred()) goto fail;
        if (ctx < 0 || ctx >= 8 || !(mask & (1L << ctx))) continue;
        PyObject *name = PyTuple_GET_ITEM(id, 2);
        PyObject *fields = PyDict_GetItemWithError(fast, name);
        if (!fields) {
            if (PyErr_Occurred()) goto fail;
            int skipped = PySet_Contains(skip, name);
            if (skipped < 0 || (!skipped && PyList_Append(rest, id) < 0)) goto fail;
            continue;
        }
        if (!PyTuple_Check(fields) || PyTuple_GET_SIZE(fields) != nfields - 2) {
            PyErr_SetString(PyExc_TypeError, "renames: each fast entry must hold every Edit field after the span");
            goto fail;
        }
        PyObject *items[16] = {Py_NewRef(PyTuple_GET_ITEM(id, 0)), Py_NewRef(PyTuple_GET_ITEM(id, 1))};
        for (Py_ssize_t k = 0; k < nfields - 2; k++) items[2 + k] = Py_NewRef(PyTuple_GET_ITEM(fields, k));
        if (append_steal(edits, make_tuple(edit_type, items, nfields)) < 0) goto fail;
    }
    PyObject *result = PyTuple_Pack(2, edits, rest);
    Py_DECREF(edits);
    Py_DECREF(rest);
    return result;
fail:
    Py_XDECREF(edits);
    Py_XDECREF(rest);
    return NULL;
}

/* previous_token(text, start) -> (token, its start): identifiers.previous_token in C */
PyObject *musify_cscan_previous_token(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "Un:previous_token", &text, &start)) return NULL;
    Text t = {PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), text};
    if (start > t.n) {
        PyErr_SetString(PyExc_IndexError, "previous_token: offset past the end of the text");
        return NULL;
    }
    Py_ssize_t j = start - 1;
    while (j >= 0) {
        Py_UCS4 c = CH(&t, j);
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\\') break;
        j--;
    }
    if (j < 0) return Py_BuildValue("(si)", "", 0);
    if (ascii_word(CH(&t, j))) {
        Py_ssize_t k = j;
        while (k > 0 && ascii_word(CH(&t, k - 1))) k--;
        PyObject *tok = PyUnicode_Substring(text, k, j + 1);
        return tok ? Py_BuildValue("(Nn)", tok, k) : NULL;
    }
    if (j >= 1) {
        Py_UCS4 a = CH(&t, j - 1), b = CH(&t, j);
        if ((a == ':' && b == ':') || (a == '-' && b == '>')) {
            PyObject *tok = PyUnicode_Substring(text, j - 1, j + 1);
            return tok ? Py_BuildValue("(Nn)", tok, j - 1) : NULL;
        }
    }
    PyObject *tok = PyUnicode_Substring(text, j, j + 1);
    return tok ? Py_BuildValue("(Nn)", tok, j) : NULL;
}

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
    for (Py_ssize_t i = 0; i < n && k < count; i++) {
        if (PyUnicode_READ(kind, data, i) != '\n') continue;
        PyObject *v = PyLong_FromSsize_t(i + 1);
        if (!v) { Py_DECREF(out); return NULL; }
        PyList_SET_ITEM(out, k++, v);
    }
    return out;
}

