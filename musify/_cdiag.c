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
 * setup(cls, fields, fast, prepare, defaults, reference, catalogue) -> None
 *   cls: the Diagnostic class; fields: its slot names in `__init__` order; fast: dict ID ->
 *   (spec, severity, pieces) or None, pieces the template as (literal, argument name, literal,
 *   ..., literal) (diagnostics._pieces: only templates whose every field is a bare name with
 *   neither conversion nor format spec), None an ID the reference answers; prepare(ID): makes
 *   and stores an ID's entry in `fast` (at its first diagnostic, and again once its spec was
 *   replaced); defaults: what a missing argument reads (one absent from it reads "?");
 *   reference: the Python function; catalogue: ID -> spec, the catalogue itself (an entry is
 *   used only while its spec is the catalogue's).
 * make_from(diag_id, path, line, column, name, severity, end, origin, sites, args) -> Diagnostic
 *   the reference's signature and answer.
 * setup_warn(reference) / warn(ctx, diag_id, offset, name, severity, end, origin, sites, args) -> None
 *   what musify/passes/_base.py `_warn_python` (the reference, set by setup_warn) does for
 *   `PassContext.warn`, with make_from above; the reference answers a negative offset, an `end`
 *   that is not an int, a context whose text is not a str, and any error.
 * console(lists, least, ranks, sites_in) -> str | None: for each list of diagnostics in `lists` in turn,
 *   `d.console() + "\n"` of each one whose severity ranks (`ranks[d.severity]`) at least `least`
 *   ("+N more in this X": X from `sites_in`, ID -> word, "function" for an ID it does not hold),
 *   all joined (musify/console.py `_print_python`); None, for the reference to answer, when an item
 *   is not exactly a Diagnostic, a list not exactly a list, `sites` not a tuple, or on any error. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

enum { ID, SEVERITY, PATH, LINE, COLUMN, MESSAGE, NAME, END_LINE, END_COLUMN, ARGS, ORIGIN, SITES, VERIFY, NFIELDS };

static PyTypeObject *diag_cls;
static Py_ssize_t offsets[NFIELDS];
static PyObject *fast, *prepare, *defaults, *reference, *catalogue, *empty_str, *question, *name_key;

static PyObject *setup(PyObject *self, PyObject *args) {
    PyObject *cls, *fields, *fast_, *prepare_, *defaults_, *reference_, *catalogue_;
    if (!PyArg_ParseTuple(args, "O!O!O!OO!OO!:setup", &PyType_Type, &cls, &PyTuple_Type, &fields, &PyDict_Type, &fast_,
                          &prepare_, &PyDict_Type, &defaults_, &reference_, &PyDict_Type, &catalogue_))
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
    Py_XSETREF(prepare, Py_NewRef(prepare_));
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
    PyObject *entry = PyDict_GetItemWithError(fast, diag_id);  /* (spec, severity, pieces), borrowed */
    if (!entry && PyErr_Occurred()) goto python;
    PyObject *spec = PyDict_GetItemWithError(catalogue, diag_id);
    if (!spec) goto python;
    if (!entry || (entry != Py_None && spec != PyTuple_GET_ITEM(entry, 0))) {  /* first met, or its spec replaced */
        PyObject *made = PyObject_CallOneArg(prepare, diag_id);  /* stored in `fast` */
        Py_XDECREF(made);
        if (!made) goto python;
        entry = PyDict_GetItemWithError(fast, diag_id);
        spec = PyDict_GetItemWithError(catalogue, diag_id);
        if (!entry || !spec) goto python;
    }
    if (entry == Py_None || !PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 3 || spec != PyTuple_GET_ITEM(entry, 0))
        goto python;
    PyObject *end_line = line, *end_column = column;
    if (end != Py_None) {
        if (!PyTuple_CheckExact(end) || PyTuple_GET_SIZE(end) != 2) goto python;
        end_line = PyTuple_GET_ITEM(end, 0);
        end_column = PyTuple_GET_ITEM(end, 1);
    }
    /* `severity or spec.severity`, for None or a str (no Python code runs here: `entry` is borrowed) */
    if (severity == Py_None || (PyUnicode_CheckExact(severity) && !PyUnicode_GET_LENGTH(severity)))
        severity = PyTuple_GET_ITEM(entry, 1);
    else if (!PyUnicode_CheckExact(severity))
        goto python;
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

/* ---- warn(): PassContext.warn's work ---- */

static PyObject *warn_reference, *s_lines, *s_starts, *s_position, *s_text, *s_display_path, *s_path, *s_found,
    *s_current_pass, *s_diagnostics, *s_append, *pass_prefix;

static PyObject *line_index;  /* musify.frontend.scanner.LineIndex, found at the first position asked */

/* (line, column) of `offset` as `LineIndex.position` answers it: a binary search of the line starts
 * `lines._starts` where `lines` is exactly a LineIndex and they are an exact list of ints (an
 * array, for a file of a million lines: the method), else the method itself; NULL with no error
 * set when the reference must answer */
static PyObject *position(PyObject *lines, Py_ssize_t offset, PyObject *boxed) {
    if (!line_index) {  /* the scanner is loaded by now: the file was scanned */
        PyObject *scanner = PyImport_ImportModule("musify.frontend.scanner");
        line_index = scanner ? PyObject_GetAttrString(scanner, "LineIndex") : NULL;
        Py_XDECREF(scanner);
        if (!line_index) {
            PyErr_Clear();
            line_index = Py_NewRef(Py_None);
        }
    }
    PyObject *starts = (PyObject *)Py_TYPE(lines) == line_index ? PyObject_GetAttr(lines, s_starts) : NULL;
    if (!starts || !PyList_CheckExact(starts)) {
        Py_XDECREF(starts);
        PyErr_Clear();
        PyObject *pos = boxed ? PyObject_CallMethodOneArg(lines, s_position, boxed) : NULL;
        if (pos && (!PyTuple_CheckExact(pos) || PyTuple_GET_SIZE(pos) != 2)) Py_CLEAR(pos);
        if (!pos) PyErr_Clear();
        return pos;
    }
    Py_ssize_t lo = 0, hi = PyList_GET_SIZE(starts), at = -1;
    while (lo < hi) {  /* bisect_right */
        Py_ssize_t mid = lo + (hi - lo) / 2;
        PyObject *item = PyList_GET_ITEM(starts, mid);
        Py_ssize_t v = PyLong_CheckExact(item) ? PyLong_AsSsize_t(item) : -1;
        if (v < 0) goto python;  /* not a start (or an error): the method answers */
        if (offset < v) hi = mid;
        else lo = mid + 1;
    }
    if (lo == 0) goto python;
    at = PyLong_AsSsize_t(PyList_GET_ITEM(starts, lo - 1));
    Py_DECREF(starts);
    return Py_BuildValue("(nn)", lo, offset - at + 1);
python:
    Py_DECREF(starts);
    PyErr_Clear();
    return NULL;
}

/* `_base._warn_python` in one call: the position, the span's end, the origin and the path read
 * from the context, the diagnostic made by `make_from` and appended to its findings */
static PyObject *warn(PyObject *self, PyObject *const *a, Py_ssize_t n) {
    if (n != 9) {
        PyErr_SetString(PyExc_TypeError, "warn takes 9 arguments");
        return NULL;
    }
    if (!warn_reference) {
        PyErr_SetString(PyExc_RuntimeError, "warn: setup_warn() was not called");
        return NULL;
    }
    PyObject *ctx = a[0], *offset = a[2], *name = a[3], *end = a[5], *origin = a[6];
    PyObject *lines = NULL, *text = NULL, *shown = NULL, *found = NULL, *diags = NULL, *start = NULL,
             *stop = NULL, *end_pos = NULL, *d = NULL, *result = NULL;
    int fallback = 0;
    Py_ssize_t off = PyLong_CheckExact(offset) ? PyLong_AsSsize_t(offset) : -1, stop_at;
    if (off < 0 || !PyUnicode_CheckExact(name)) goto python;
    if (!(lines = PyObject_GetAttr(ctx, s_lines)) || !(start = position(lines, off, offset))) goto python;
    if (!(text = PyObject_GetAttr(ctx, s_text)) || !PyUnicode_CheckExact(text)) goto python;
    if (end == Py_None) {  /* the end of `name` when it is written at the offset, else the offset */
        stop_at = off;
        if (PyUnicode_GET_LENGTH(name)) {
            Py_ssize_t match = PyUnicode_Tailmatch(text, name, off, PY_SSIZE_T_MAX, -1);
            if (match < 0) goto python;
            if (match) stop_at = off + PyUnicode_GET_LENGTH(name);
        }
    } else {
        stop_at = PyLong_CheckExact(end) ? PyLong_AsSsize_t(end) : -1;
        if (stop_at < 0) goto python;
    }
    if (stop_at == off) {
        end_pos = Py_NewRef(start);
    } else if (off < stop_at && PyUnicode_FindChar(text, '\n', off, stop_at, 1) == -1) {  /* the same line */
        Py_ssize_t column = PyLong_AsSsize_t(PyTuple_GET_ITEM(start, 1));
        if (column == -1 && PyErr_Occurred()) goto python;
        end_pos = Py_BuildValue("(On)", PyTuple_GET_ITEM(start, 0), column + stop_at - off);
    } else {
        stop = PyLong_FromSsize_t(stop_at);
        end_pos = stop ? position(lines, stop_at, stop) : NULL;
    }
    if (!end_pos) goto python;
    if (!(shown = PyObject_GetAttr(ctx, s_display_path))) goto python;
    int truth = PyObject_IsTrue(shown);
    if (truth < 0) goto python;
    if (!truth) {
        Py_SETREF(shown, PyObject_GetAttr(ctx, s_path));
        if (!shown) goto python;
    }
    if (!(found = PyObject_GetAttr(ctx, s_found))) goto python;
    if ((truth = PyObject_IsTrue(origin)) < 0) goto python;
    if (truth) {
        origin = Py_NewRef(origin);
    } else {
        PyObject *current = PyObject_GetAttr(found, s_current_pass);
        origin = current ? PyNumber_Add(pass_prefix, current) : NULL;
        Py_XDECREF(current);
        if (!origin) goto python;
    }
    PyObject *made[10] = {a[1], shown, PyTuple_GET_ITEM(start, 0), PyTuple_GET_ITEM(start, 1), name, a[4], end_pos,
                          origin, a[7], a[8]};
    if (!(diags = PyObject_GetAttr(found, s_diagnostics))) {
        Py_DECREF(origin);
        goto python;
    }
    d = make_from(NULL, made, 10);
    Py_DECREF(origin);
    if (!d) goto python;
    /* nothing is changed before this point: up to here the reference may start over */
    int bad = PyList_CheckExact(diags) ? PyList_Append(diags, d) : -1;
    if (bad && !PyList_CheckExact(diags)) {
        PyObject *r = PyObject_CallMethodOneArg(diags, s_append, d);
        bad = r ? 0 : -1;
        Py_XDECREF(r);
    }
    result = bad ? NULL : Py_NewRef(Py_None);
    goto done;
python:  /* the reference answers (and raises its own error, if any) */
    PyErr_Clear();
    fallback = 1;
done:
    Py_XDECREF(lines);
    Py_XDECREF(text);
    Py_XDECREF(shown);
    Py_XDECREF(found);
    Py_XDECREF(diags);
    Py_XDECREF(start);
    Py_XDECREF(stop);
    Py_XDECREF(end_pos);
    Py_XDECREF(d);
    return fallback ? PyObject_Vectorcall(warn_reference, a, (size_t)n, NULL) : result;
}

static PyObject *setup_warn(PyObject *self, PyObject *reference_) {
    Py_XSETREF(warn_reference, Py_NewRef(reference_));
    Py_RETURN_NONE;
}

#define SLOT(obj, field) (*(PyObject **)((char *)(obj) + offsets[field]))

/* the decimal digits of an exact int that fits a long long, at the end of buf[24]; 0 otherwise */
static int digits(PyObject *v, char buf[24]) {
    if (!PyLong_CheckExact(v)) return 0;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) return 0;
    unsigned long long u = x < 0 ? 0ULL - (unsigned long long)x : (unsigned long long)x;
    int n = 0;
    do {
        buf[23 - n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (x < 0) buf[23 - n++] = '-';
    return n;
}

/* One console line's pieces: f"{path}:{line}:{column}: {severity}: {id}: {message}{more}" */
typedef struct {
    PyObject *path, *severity, *id, *message;
    char line[24], column[24], more[48];
    int nline, ncolumn, nmore;
} Line;

/* 1 and `out` filled when `d` is a Diagnostic this can write, of rank >= least; 0 one of lower
 * rank; -1 one the reference must write */
static int line_of(PyObject *d, long least, PyObject *ranks, PyObject *sites_in, Line *out) {
    if (!Py_IS_TYPE(d, diag_cls)) return -1;
    PyObject *severity = SLOT(d, SEVERITY);
    if (!severity || !PyUnicode_CheckExact(severity)) return -1;
    PyObject *rank = PyDict_GetItemWithError(ranks, severity);
    if (!rank || !PyLong_CheckExact(rank)) return -1;
    long r = PyLong_AsLong(rank);
    if (r == -1 && PyErr_Occurred()) return -1;
    if (r < least) return 0;
    PyObject *sites = SLOT(d, SITES), *line = SLOT(d, LINE), *column = SLOT(d, COLUMN);
    out->path = SLOT(d, PATH);
    out->severity = severity;
    out->id = SLOT(d, ID);
    out->message = SLOT(d, MESSAGE);
    if (!sites || !PyTuple_CheckExact(sites) || !line || !column || !out->path || !PyUnicode_CheckExact(out->path)
        || !out->id || !PyUnicode_CheckExact(out->id) || !out->message || !PyUnicode_CheckExact(out->message))
        return -1;
    out->nline = digits(line, out->line);
    out->ncolumn = digits(column, out->column);
    if (!out->nline || !out->ncolumn) return -1;
    out->nmore = 0;
    if (PyTuple_GET_SIZE(sites)) {
        const char *scope = "function";
        PyObject *word = PyDict_GetItemWithError(sites_in, out->id);
        if (word) {
            if (!PyUnicode_CheckExact(word) || !PyUnicode_IS_ASCII(word)) return -1;
            scope = (const char *)PyUnicode_DATA(word);
        } else if (PyErr_Occurred()) {
            return -1;
        }
        out->nmore = PyOS_snprintf(out->more, sizeof out->more, " (+%zd more in this %s)", PyTuple_GET_SIZE(sites), scope);
        if (out->nmore < 0 || (size_t)out->nmore >= sizeof out->more) return -1;
    }
    return 1;
}

static Py_ssize_t line_length(const Line *l) {
    return PyUnicode_GET_LENGTH(l->path) + 1 + l->nline + 1 + l->ncolumn + 2 + PyUnicode_GET_LENGTH(l->severity) + 2
           + PyUnicode_GET_LENGTH(l->id) + 2 + PyUnicode_GET_LENGTH(l->message) + l->nmore + 1;
}

static Py_UCS4 line_max(const Line *l) {
    Py_UCS4 m = PyUnicode_MAX_CHAR_VALUE(l->path), x;
    if ((x = PyUnicode_MAX_CHAR_VALUE(l->severity)) > m) m = x;
    if ((x = PyUnicode_MAX_CHAR_VALUE(l->id)) > m) m = x;
    if ((x = PyUnicode_MAX_CHAR_VALUE(l->message)) > m) m = x;
    return m;
}

static void put_str(PyObject *to, Py_ssize_t *at, PyObject *s) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    PyUnicode_CopyCharacters(to, *at, s, 0, n);  /* cannot fail: `to` is new and wide enough */
    *at += n;
}

static void put_ascii(PyObject *to, Py_ssize_t *at, const char *s, Py_ssize_t n) {
    int kind = PyUnicode_KIND(to);
    void *data = PyUnicode_DATA(to);
    for (Py_ssize_t i = 0; i < n; i++) PyUnicode_WRITE(kind, data, *at + i, (Py_UCS4)(unsigned char)s[i]);
    *at += n;
}

static void put_line(PyObject *to, Py_ssize_t *at, const Line *l) {
    put_str(to, at, l->path);
    put_ascii(to, at, ":", 1);
    put_ascii(to, at, l->line + 24 - l->nline, l->nline);
    put_ascii(to, at, ":", 1);
    put_ascii(to, at, l->column + 24 - l->ncolumn, l->ncolumn);
    put_ascii(to, at, ": ", 2);
    put_str(to, at, l->severity);
    put_ascii(to, at, ": ", 2);
    put_str(to, at, l->id);
    put_ascii(to, at, ": ", 2);
    put_str(to, at, l->message);
    put_ascii(to, at, l->more, l->nmore);
    put_ascii(to, at, "\n", 1);
}

static PyObject *console(PyObject *self, PyObject *args) {
    PyObject *lists, *ranks, *sites_in;
    long least;
    if (!PyArg_ParseTuple(args, "O!lO!O!:console", &PyList_Type, &lists, &least, &PyDict_Type, &ranks,
                          &PyDict_Type, &sites_in)) return NULL;
    if (!diag_cls) Py_RETURN_NONE;
    /* first the length and widest character; every object read is held by a list we hold (the
     * lists are not changed between the passes: no Python code runs) */
    Py_ssize_t length = 0;
    Py_UCS4 widest = 127;
    Line l;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(lists); i++) {
        PyObject *diags = PyList_GET_ITEM(lists, i);
        if (!PyList_CheckExact(diags)) goto python;
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(diags); j++) {
            int r = line_of(PyList_GET_ITEM(diags, j), least, ranks, sites_in, &l);
            if (r < 0) goto python;
            if (!r) continue;
            length += line_length(&l);
            Py_UCS4 m = line_max(&l);
            if (m > widest) widest = m;
        }
    }
    PyObject *text = PyUnicode_New(length, widest);
    if (!text) return NULL;
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(lists); i++) {
        PyObject *diags = PyList_GET_ITEM(lists, i);
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(diags); j++)
            if (line_of(PyList_GET_ITEM(diags, j), least, ranks, sites_in, &l) > 0) put_line(text, &at, &l);
    }
    return text;
python:  /* an error too: the reference writes the lines before it and raises it */
    PyErr_Clear();
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "setup(cls, fields, fast, defaults, reference, catalogue) -> None"},
    {"make_from", (PyCFunction)(void (*)(void))make_from, METH_FASTCALL,
     "make_from(diag_id, path, line, column, name, severity, end, origin, sites, args) -> Diagnostic"},
    {"warn", (PyCFunction)(void (*)(void))warn, METH_FASTCALL,
     "warn(ctx, diag_id, offset, name, severity, end, origin, sites, args) -> None: PassContext.warn's work"},
    {"setup_warn", setup_warn, METH_O, "setup_warn(reference) -> None: the Python function warn falls back to"},
    {"console", console, METH_VARARGS, "console(lists, least, ranks, sites_in) -> str | None: the console lines of diagnostics"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cdiag", NULL, -1, methods};

PyMODINIT_FUNC PyInit__cdiag(void) {
    empty_str = PyUnicode_InternFromString("");
    question = PyUnicode_InternFromString("?");
    name_key = PyUnicode_InternFromString("name");
    if (!empty_str || !question || !name_key) return NULL;
    const char *texts[] = {"lines", "_starts", "position", "text", "display_path", "path", "found", "current_pass",
                           "diagnostics", "append", "pass:"};
    PyObject **names[] = {&s_lines, &s_starts, &s_position, &s_text, &s_display_path, &s_path, &s_found,
                          &s_current_pass, &s_diagnostics, &s_append, &pass_prefix};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        if (!(*names[i] = PyUnicode_InternFromString(texts[i]))) return NULL;
    return PyModule_Create(&module);
}
