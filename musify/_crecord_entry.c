/* The _crecord extension's entry(): a file's whole record entry as compact JSON (musify/_crecord.c
 * says what it answers). */
#include "_crecord.h"
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

PyObject *crecord_entry(PyObject *self, PyObject *args) {
    PyObject *keys, *values, *raw, *shape_obj = Py_None;
    Py_ssize_t raw_at;
    Shape shape = {NULL, NULL, NULL, NULL, 0, {0}};
    if (!PyArg_ParseTuple(args, "O!OnO|O:entry", &PyTuple_Type, &keys, &values, &raw_at, &raw, &shape_obj))
        return NULL;
    if (!PyList_CheckExact(values) && !PyTuple_CheckExact(values)) Py_RETURN_NONE;
    if (shape_obj != Py_None && shape_obj == checked_shape) {  /* (a tuple: its items cannot change) */
        shape.cls = PyTuple_GET_ITEM(shape_obj, 0);
        shape.keys = PyTuple_GET_ITEM(shape_obj, 1);
        shape.attrs = PyTuple_GET_ITEM(shape_obj, 2);
        shape.alts = PyTuple_GET_ITEM(shape_obj, 3);
    } else if (shape_obj != Py_None) {
        if (!PyArg_ParseTuple(shape_obj, "O!O!O!O!:entry's shape", &PyType_Type, &shape.cls, &PyTuple_Type, &shape.keys,
                              &PyTuple_Type, &shape.attrs, &PyTuple_Type, &shape.alts))
            return NULL;
        Py_ssize_t n = PyTuple_GET_SIZE(shape.keys);
        if (PyTuple_GET_SIZE(shape.attrs) != n || PyTuple_GET_SIZE(shape.alts) != n) {
            PyErr_SetString(PyExc_ValueError, "entry's shape: keys, attributes and alternatives differ in length");
            return NULL;
        }
        if (n > SHAPE_MAX) {
            PyErr_SetString(PyExc_ValueError, "entry's shape: more than 32 attributes");
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *k = PyTuple_GET_ITEM(shape.keys, i), *a = PyTuple_GET_ITEM(shape.attrs, i),
                     *alt = PyTuple_GET_ITEM(shape.alts, i);
            if (!PyUnicode_CheckExact(k) || !PyUnicode_IS_ASCII(k) || !PyUnicode_CheckExact(a)
                || (alt != Py_None && !PyUnicode_CheckExact(alt))) {
                PyErr_SetString(PyExc_TypeError, "entry's shape: ASCII key texts and attribute names");
                return NULL;
            }
        }
        if (PyTuple_CheckExact(shape_obj)) Py_XSETREF(checked_shape, Py_NewRef(shape_obj));
    }
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    if (PySequence_Fast_GET_SIZE(values) != n) Py_RETURN_NONE;
    if (raw != Py_None && (!PyUnicode_CheckExact(raw) || !PyUnicode_IS_ASCII(raw))) Py_RETURN_NONE;
    Out o = {NULL, 0, 0};
    PyObject *result = NULL;
    if (out_grow(&o, (raw != Py_None ? PyUnicode_GET_LENGTH(raw) : 0) + 1024) < 0 || OUT_LIT(&o, "{") < 0) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key = PyTuple_GET_ITEM(keys, i);
        if (!PyUnicode_CheckExact(key) || !PyUnicode_IS_ASCII(key)) goto fallback;
        if ((i && OUT_LIT(&o, ",") < 0) || out_ascii(&o, key) < 0) goto done;
        if (i == raw_at && raw != Py_None) {
            if (out_ascii(&o, raw) < 0) goto done;
            continue;
        }
        if (i >= PySequence_Fast_GET_SIZE(values)) goto fallback;
        PyObject *value = Py_NewRef(PySequence_Fast_GET_ITEM(values, i));
        int r = out_value(&o, value, 0, shape.cls ? &shape : NULL);
        Py_DECREF(value);
        if (r < 0) goto done;
        if (r == 0) goto fallback;
    }
    if (OUT_LIT(&o, "}") < 0) goto done;
    result = out_str(&o);
    goto done;
fallback:
    result = Py_NewRef(Py_None);
done:
    PyMem_Free(o.buf);
    return result;
}
