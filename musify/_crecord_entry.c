/* The _crecord extension's entry(): a file's whole record entry as compact JSON (musify/_crecord.c
 * says what it answers). */
#include "_crecord.h"
#include <math.h>
#include <structmember.h>

/* ---- entry() ---- */

/* an object of one class written as a JSON object, as its `to_json` would make it: (class, key
 * texts ('"name":'), attribute names, attribute names read when the first is falsy or None).
 * `slots`: where each attribute (then each alternative) is an object slot of the class, its offset,
 * else -1; found when the first object is written (most entries have none) */
#define SHAPE_MAX 32
typedef struct {
    PyObject *cls, *keys, *attrs, *alts;
    int found;
    Py_ssize_t slots[2 * SHAPE_MAX];
} Shape;

/* the offset of `name`'s slot in objects of exactly `cls`, or -1: where getattr would read the
 * slot itself (the class's generic getattr, the class's own member descriptor of an object) */
static Py_ssize_t slot_offset(PyTypeObject *cls, PyObject *name) {
    if (name == Py_None || cls->tp_getattro != PyObject_GenericGetAttr || !cls->tp_dict) return -1;
    PyObject *desc = PyDict_GetItemWithError(cls->tp_dict, name);
    if (!desc) {
        PyErr_Clear();
        return -1;
    }
    if (!Py_IS_TYPE(desc, &PyMemberDescr_Type) || ((PyMemberDescrObject *)desc)->d_common.d_type != cls) return -1;
    PyMemberDef *m = ((PyMemberDescrObject *)desc)->d_member;
    if (m->type != T_OBJECT_EX || m->offset < (Py_ssize_t)sizeof(PyObject)
        || m->offset + (Py_ssize_t)sizeof(PyObject *) > cls->tp_basicsize)
        return -1;
    return m->offset;
}

static void shape_find(Shape *shape) {
    Py_ssize_t n = PyTuple_GET_SIZE(shape->attrs);
    for (Py_ssize_t i = 0; i < n; i++) {
        shape->slots[i] = slot_offset((PyTypeObject *)shape->cls, PyTuple_GET_ITEM(shape->attrs, i));
        shape->slots[SHAPE_MAX + i] = slot_offset((PyTypeObject *)shape->cls, PyTuple_GET_ITEM(shape->alts, i));
    }
    shape->found = 1;
}

/* getattr(v, name), read from the slot at `offset` when there is one and it is set */
static PyObject *attribute(PyObject *v, PyObject *name, Py_ssize_t offset) {
    if (offset >= 0) {
        PyObject *value = *(PyObject **)((char *)v + offset);
        if (value) return Py_NewRef(value);
    }
    return PyObject_GetAttr(v, name);  /* an unset slot: its AttributeError */
}

static int out_value(Out *o, PyObject *v, int depth, Shape *shape);

/* repr(x) where x is the double nearest n / 10^6 for a whole n under 10^15 (every entry's
 * `seconds`, rounded to six places): 1, or 0 for any other double (float's repr writes it). That
 * decimal has at most 15 significant digits, so no other decimal of as few digits has the same
 * nearest double: its digits are the shortest repr's (which cost a big-number dtoa, a fifth of
 * an entry). Written as repr places them: "0.0", "12.5", "0.0001", "1.5e-05" (an exponent below
 * 1e-4). */
static int out_six_places(Out *o, double x) {
    if (x == 0 && !signbit(x)) return OUT_LIT(o, "0.0") < 0 ? -1 : 1;
    if (!(x > 0 && x < 1e9)) return 0;
    double p = nearbyint(x * 1e6);
    if (p / 1e6 != x) return 0;  /* (IEEE division is correctly rounded: the nearest double) */
    char digits[24];
    int n = 0;
    for (unsigned long long u = (unsigned long long)p; u; u /= 10) digits[n++] = (char)('0' + u % 10);
    int decpt = n - 6;  /* x = 0.d1d2...dn x 10^decpt */
    int low = 0;  /* digits[] is least significant first: the trailing zeros dropped */
    while (low < n && digits[low] == '0') low++;
    char text[48];
    int t = 0;
    if (decpt <= -4) {  /* d1[.d2...]e-XX */
        text[t++] = digits[n - 1];
        if (n - 1 > low) text[t++] = '.';
        for (int i = n - 2; i >= low; i--) text[t++] = digits[i];
        int e = 1 - decpt;
        text[t++] = 'e';
        text[t++] = '-';
        text[t++] = (char)('0' + e / 10);
        text[t++] = (char)('0' + e % 10);
    } else if (decpt <= 0) {
        text[t++] = '0';
        text[t++] = '.';
        for (int i = 0; i < -decpt; i++) text[t++] = '0';
        for (int i = n - 1; i >= low; i--) text[t++] = digits[i];
    } else {
        for (int i = n - 1; i >= n - decpt; i--) text[t++] = digits[i];
        text[t++] = '.';
        if (n - decpt - 1 < low) text[t++] = '0';
        for (int i = n - decpt - 1; i >= low; i--) text[t++] = digits[i];
    }
    return out_write(o, text, t) < 0 ? -1 : 1;
}

static int out_shaped(Out *o, PyObject *v, int depth, Shape *shape) {
    Py_ssize_t n = PyTuple_GET_SIZE(shape->keys);
    if (!shape->found) shape_find(shape);
    if (OUT_LIT(o, "{") < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((i && OUT_LIT(o, ",") < 0) || out_ascii(o, PyTuple_GET_ITEM(shape->keys, i)) < 0) return -1;
        PyObject *value = attribute(v, PyTuple_GET_ITEM(shape->attrs, i), shape->slots[i]);
        if (!value) return -1;
        PyObject *alt = PyTuple_GET_ITEM(shape->alts, i);
        if (alt != Py_None) {  /* `value or alt` */
            int truth = PyObject_IsTrue(value);
            if (truth < 0) {
                Py_DECREF(value);
                return -1;
            }
            if (!truth) {
                Py_SETREF(value, attribute(v, alt, shape->slots[SHAPE_MAX + i]));
                if (!value) return -1;
            }
        }
        int r = out_value(o, value, depth + 1, NULL);
        Py_DECREF(value);
        if (r <= 0) return r;
    }
    return OUT_LIT(o, "}") < 0 ? -1 : 1;
}

/* 1 written, 0 a value json would write but this does not (the caller falls back), -1 an error;
 * `shape`: how objects of one class are written (only as items of a list) */
static int out_value(Out *o, PyObject *v, int depth, Shape *shape) {
    if (depth > 32) return 0;
    if (v == Py_None) return OUT_LIT(o, "null") < 0 ? -1 : 1;
    if (v == Py_True) return OUT_LIT(o, "true") < 0 ? -1 : 1;
    if (v == Py_False) return OUT_LIT(o, "false") < 0 ? -1 : 1;
    if (PyUnicode_CheckExact(v)) return out_quoted(o, v, 0, PyUnicode_GET_LENGTH(v)) < 0 ? -1 : 1;
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred()) return -1;
        if (!overflow) return out_int(o, x) < 0 ? -1 : 1;
        PyObject *r = PyLong_Type.tp_repr(v);
        if (!r) return -1;
        int ok = out_ascii(o, r);
        Py_DECREF(r);
        return ok < 0 ? -1 : 1;
    }
    if (PyFloat_CheckExact(v)) {
        double x = PyFloat_AS_DOUBLE(v);
        int fast = out_six_places(o, x);
        if (fast) return fast;
        if (x != x) return OUT_LIT(o, "NaN") < 0 ? -1 : 1;
        if (Py_IS_INFINITY(x)) return (x > 0 ? OUT_LIT(o, "Infinity") : OUT_LIT(o, "-Infinity")) < 0 ? -1 : 1;
        PyObject *r = PyFloat_Type.tp_repr(v);
        if (!r) return -1;
        int ok = out_ascii(o, r);
        Py_DECREF(r);
        return ok < 0 ? -1 : 1;
    }
    if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
        if (OUT_LIT(o, "[") < 0) return -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (i && OUT_LIT(o, ",") < 0) return -1;
            /* a list may change under a value's repr: read each item afresh, bounds checked */
            if (i >= PySequence_Fast_GET_SIZE(v)) return 0;
            PyObject *item = Py_NewRef(PySequence_Fast_GET_ITEM(v, i));
            int r = shape && Py_IS_TYPE(item, (PyTypeObject *)shape->cls) ? out_shaped(o, item, depth, shape)
                                                                          : out_value(o, item, depth + 1, NULL);
            Py_DECREF(item);
            if (r <= 0) return r;
        }
        return OUT_LIT(o, "]") < 0 ? -1 : 1;
    }
    if (PyDict_CheckExact(v)) {
        Py_ssize_t pos = 0, i = 0;
        PyObject *key, *value;
        if (OUT_LIT(o, "{") < 0) return -1;
        while (PyDict_Next(v, &pos, &key, &value)) {
            if (!PyUnicode_CheckExact(key)) return 0;
            if ((i++ && OUT_LIT(o, ",") < 0) || out_quoted(o, key, 0, PyUnicode_GET_LENGTH(key)) < 0
                || OUT_LIT(o, ":") < 0)
                return -1;
            Py_INCREF(value);
            int r = out_value(o, value, depth + 1, NULL);
            Py_DECREF(value);
            if (r <= 0) return r;
        }
        return OUT_LIT(o, "}") < 0 ? -1 : 1;
    }
    return 0;
}

/* the last shape checked (a strong reference: an entry's shape is one tuple for the whole run) */
static PyObject *checked_shape;

/* `shape_obj` (None, or (class, key texts, attribute names, alternatives)) read into `shape`; -1
 * on an error (checked once per shape tuple, then only read) */
static int shape_read(PyObject *shape_obj, Shape *shape) {
    if (shape_obj == Py_None) return 0;
    if (shape_obj == checked_shape) {  /* (a tuple: its items cannot change) */
        shape->cls = PyTuple_GET_ITEM(shape_obj, 0);
        shape->keys = PyTuple_GET_ITEM(shape_obj, 1);
        shape->attrs = PyTuple_GET_ITEM(shape_obj, 2);
        shape->alts = PyTuple_GET_ITEM(shape_obj, 3);
        return 0;
    }
    if (!PyArg_ParseTuple(shape_obj, "O!O!O!O!:entry's shape", &PyType_Type, &shape->cls, &PyTuple_Type, &shape->keys,
                          &PyTuple_Type, &shape->attrs, &PyTuple_Type, &shape->alts))
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(shape->keys);
    if (PyTuple_GET_SIZE(shape->attrs) != n || PyTuple_GET_SIZE(shape->alts) != n) {
        PyErr_SetString(PyExc_ValueError, "entry's shape: keys, attributes and alternatives differ in length");
        return -1;
    }
    if (n > SHAPE_MAX) {
        PyErr_SetString(PyExc_ValueError, "entry's shape: more than 32 attributes");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *k = PyTuple_GET_ITEM(shape->keys, i), *a = PyTuple_GET_ITEM(shape->attrs, i),
                 *alt = PyTuple_GET_ITEM(shape->alts, i);
        if (!PyUnicode_CheckExact(k) || !PyUnicode_IS_ASCII(k) || !PyUnicode_CheckExact(a)
            || (alt != Py_None && !PyUnicode_CheckExact(alt))) {
            PyErr_SetString(PyExc_TypeError, "entry's shape: ASCII key texts and attribute names");
            return -1;
        }
    }
    if (PyTuple_CheckExact(shape_obj)) Py_XSETREF(checked_shape, Py_NewRef(shape_obj));
    return 0;
}

/* whether every key text is an exact ASCII str (what out_fields writes as it is) */
static int ascii_keys(PyObject *keys) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(keys); i++) {
        PyObject *key = PyTuple_GET_ITEM(keys, i);
        if (!PyUnicode_CheckExact(key) || !PyUnicode_IS_ASCII(key)) return 0;
    }
    return 1;
}

/* "{" key0 value0 "," ... "}" of an entry's values (borrowed; values[raw_at] not read where `raw`
 * is not NULL: that ASCII text is written instead): 1, 0 (a value left to Python) or -1 */
static int out_fields(Out *o, PyObject *keys, PyObject **values, Py_ssize_t raw_at, PyObject *raw, Shape *shape) {
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    if (OUT_LIT(o, "{") < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if ((i && OUT_LIT(o, ",") < 0) || out_ascii(o, PyTuple_GET_ITEM(keys, i)) < 0) return -1;
        if (i == raw_at && raw) {
            if (out_ascii(o, raw) < 0) return -1;
            continue;
        }
        PyObject *value = Py_NewRef(values[i]);
        int r = out_value(o, value, 0, shape->cls ? shape : NULL);
        Py_DECREF(value);
        if (r <= 0) return r;
    }
    return OUT_LIT(o, "}") < 0 ? -1 : 1;
}

PyObject *crecord_entry(PyObject *self, PyObject *args) {
    PyObject *keys, *values, *raw, *shape_obj = Py_None;
    Py_ssize_t raw_at;
    Shape shape = {NULL, NULL, NULL, NULL, 0, {0}};
    if (!PyArg_ParseTuple(args, "O!OnO|O:entry", &PyTuple_Type, &keys, &values, &raw_at, &raw, &shape_obj))
        return NULL;
    if (!PyList_CheckExact(values) && !PyTuple_CheckExact(values)) Py_RETURN_NONE;
    if (shape_read(shape_obj, &shape) < 0) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    if (PySequence_Fast_GET_SIZE(values) != n || !ascii_keys(keys)) Py_RETURN_NONE;
    if (raw != Py_None && (!PyUnicode_CheckExact(raw) || !PyUnicode_IS_ASCII(raw))) Py_RETURN_NONE;
    /* the values held while they are written: a value's repr could change the list */
    PyObject *held = PySequence_Tuple(values);
    if (!held) return NULL;
    Out o = {NULL, 0, 0, NULL};
    PyObject *result = NULL;
    int r = -1;
    if (out_grow(&o, (raw != Py_None ? PyUnicode_GET_LENGTH(raw) : 0) + 1024) == 0)
        r = out_fields(&o, keys, PySequence_Fast_ITEMS(held), raw_at, raw != Py_None ? raw : NULL, &shape);
    result = r > 0 ? out_str(&o) : r == 0 ? Py_NewRef(Py_None) : NULL;
    PyMem_Free(o.buf);
    Py_DECREF(held);
    return result;
}

/* ---- entries() ---- */

/* round(v, 6) as Python rounds a float 0 <= x < 1e9 (its exact value rounded half-even to six
 * places, then the nearest double): n, the whole number nearest x * 10^6, is that rounding when
 * the exact remainder x * 10^6 - n (one fused multiply-add) is well inside a half; anything
 * else, a possible tie included, is Python's round */
static PyObject *rounded(PyObject *v, PyObject *round_fn) {
    if (PyFloat_CheckExact(v)) {
        double x = PyFloat_AS_DOUBLE(v);
        if (x >= 0 && x < 1e9) {
            double n = nearbyint(x * 1e6);
            if (fabs(fma(x, 1e6, -n)) < 0.49) return PyFloat_FromDouble(n / 1e6);
        }
    }
    PyObject *six = PyLong_FromLong(6);
    PyObject *r = six ? PyObject_CallFunctionObjArgs(round_fn, v, six, NULL) : NULL;
    Py_XDECREF(six);
    return r;
}

/* what `entries` reads of a run: FileResult, PackedEdits, the serialised names and their key
 * texts, where the edits and the seconds are among them, the diagnostics' shape, round, and the
 * names "text" and "_json" (what PackedEdits.text returns) */
typedef struct {
    PyObject *cls, *packed, *names, *keys, *shape_obj, *round_fn, *text_name, *json_name;
    Py_ssize_t edits_at, seconds_at;
} Layout;

/* file `f`'s entry appended (after `sep`): 1, 0 (nothing appended: the entry is left to
 * Python, as FileResult.entry_json would leave it or a value out_value leaves) or -1 */
static int out_file(Out *o, PyObject *f, const char *sep, Py_ssize_t sep_len, int deterministic, Layout *lay,
                    Shape *shape) {
    Py_ssize_t n = PyTuple_GET_SIZE(lay->names), mark = o->len;
    if (Py_TYPE(f) != (PyTypeObject *)lay->cls || n > 64) return 0;
    PyObject *attrs = PyObject_GenericGetDict(f, NULL);  /* every field as stored, as entry_json reads them */
    if (!attrs) return -1;
    PyObject *values[64], *raw = NULL, *seconds = NULL;
    int r = 1;
    /* the fields in the order __init__ stores them, read in that order while the stored names are
     * the very names asked for (a lookup each cost more than writing most values); any other, looked up */
    PyObject *name, *value;
    Py_ssize_t pos = 0, got = 0;
    while (got < n && PyDict_Next(attrs, &pos, &name, &value) && name == PyTuple_GET_ITEM(lay->names, got))
        values[got++] = value;
    for (Py_ssize_t i = got; i < n && r > 0; i++) {
        values[i] = PyDict_GetItemWithError(attrs, PyTuple_GET_ITEM(lay->names, i));
        if (!values[i]) r = PyErr_Occurred() ? -1 : 0;  /* (a field not stored: entry_json's attribute path) */
    }
    if (r > 0) {  /* packed edits: their JSON as rendered, or read back from the spool (none: Python's pieces) */
        PyObject *edits = values[lay->edits_at];
        r = Py_IS_TYPE(edits, (PyTypeObject *)lay->packed) ? 1 : PyObject_IsInstance(edits, lay->packed);
        if (r > 0) {  /* text(): of exactly PackedEdits, its `_json` slot (read, not called) */
            raw = Py_IS_TYPE(edits, (PyTypeObject *)lay->packed) ? PyObject_GetAttr(edits, lay->json_name)
                                                                 : PyObject_CallMethodNoArgs(edits, lay->text_name);
            r = !raw ? -1 : PyUnicode_CheckExact(raw) && PyUnicode_IS_ASCII(raw) ? 1 : 0;
        } else if (r == 0) {
            r = 1;
        }
    }
    if (r > 0) {
        seconds = deterministic ? PyFloat_FromDouble(0.0) : rounded(values[lay->seconds_at], lay->round_fn);
        r = seconds ? 1 : -1;
    }
    if (r > 0) {
        values[lay->seconds_at] = seconds;
        r = out_write(o, sep, sep_len) < 0 ? -1 : out_fields(o, lay->keys, values, lay->edits_at, raw, shape);
    }
    if (r == 0) o->len = mark;
    Py_XDECREF(raw);
    Py_XDECREF(seconds);
    Py_DECREF(attrs);
    return r;
}

PyObject *crecord_entries(PyObject *self, PyObject *args) {
    PyObject *files, *layout;
    Py_ssize_t start, limit;
    int deterministic;
    Layout lay;
    Shape shape = {NULL, NULL, NULL, NULL, 0, {0}};
    if (!PyArg_ParseTuple(args, "O!nnpO!:entries", &PyList_Type, &files, &start, &limit, &deterministic,
                          &PyTuple_Type, &layout)
        || !PyArg_ParseTuple(layout, "O!O!O!O!nnOOUU:entries' layout", &PyType_Type, &lay.cls, &PyType_Type,
                             &lay.packed, &PyTuple_Type, &lay.names, &PyTuple_Type, &lay.keys, &lay.edits_at,
                             &lay.seconds_at, &lay.shape_obj, &lay.round_fn, &lay.text_name, &lay.json_name)
        || shape_read(lay.shape_obj, &shape) < 0)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(lay.names);
    if (PyTuple_GET_SIZE(lay.keys) != n || !ascii_keys(lay.keys) || lay.edits_at < 0 || lay.edits_at >= n
        || lay.seconds_at < 0 || lay.seconds_at >= n || start < 0) {
        PyErr_SetString(PyExc_ValueError, "entries: a layout of n names, n ASCII keys and two places among them");
        return NULL;
    }
    Out o = {NULL, 0, 0, NULL};
    Py_ssize_t i = start;
    o.cap = limit + (limit >> 3) + 4096;  /* a piece, and room for the entry that ends it */
    if (!(o.bytes = PyBytes_FromStringAndSize(NULL, o.cap))) return NULL;
    o.buf = PyBytes_AS_STRING(o.bytes);
    for (; i < PyList_GET_SIZE(files) && (i == start || o.len < limit); i++) {
        PyObject *f = Py_NewRef(PyList_GET_ITEM(files, i));
        int r = i ? out_file(&o, f, ",\n    ", 6, deterministic, &lay, &shape) : out_file(&o, f, "    ", 4, deterministic, &lay, &shape);
        Py_DECREF(f);
        if (r < 0) {
            Py_XDECREF(o.bytes);
            return NULL;
        }
        if (r == 0) break;
    }
    if (_PyBytes_Resize(&o.bytes, o.len) < 0) return NULL;
    PyObject *result = Py_BuildValue("(Nn)", o.bytes, i);
    return result;
}
