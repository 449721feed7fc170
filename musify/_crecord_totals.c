/* The _crecord extension's add_counts() and sums(): the record's totals; line_count(), a file's
 * lines_total, and the newline count record() walks with; and sorted_counts(), a file's dicts of
 * counts in key order (musify/_crecord.c says what they answer). */
#include "_crecord.h"

/* ---- add_counts() ---- */

/* total[k] = total.get(k, 0) + v for each item of the exact dict d; -1 on an error */
static int add_dict(PyObject *total, PyObject *d, PyObject *zero) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int r = 0;
    Py_INCREF(d);
    while (r == 0 && PyDict_Next(d, &pos, &key, &value)) {
        Py_INCREF(key);
        Py_INCREF(value);
        PyObject *old = PyDict_GetItemWithError(total, key);
        /* total.get(key, 0) + value: 0 + value when new (a bool counts as an int) */
        PyObject *sum = old ? PyNumber_Add(old, value) : PyErr_Occurred() ? NULL : PyNumber_Add(zero, value);
        r = sum ? PyDict_SetItem(total, key, sum) : -1;
        Py_XDECREF(sum);
        Py_DECREF(key);
        Py_DECREF(value);
    }
    Py_DECREF(d);
    return r;
}

PyObject *crecord_add_counts(PyObject *self, PyObject *args) {
    PyObject *total, *counts;
    if (!PyArg_ParseTuple(args, "O!O!:add_counts", &PyDict_Type, &total, &PyList_Type, &counts)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(counts);
    for (Py_ssize_t i = 0; i < n; i++)  /* exact dicts only (no items() of a subclass to honour) */
        if (!PyDict_CheckExact(PyList_GET_ITEM(counts, i))) Py_RETURN_FALSE;
    PyObject *zero = PyLong_FromLong(0);
    if (!zero) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (add_dict(total, PyList_GET_ITEM(counts, i), zero) < 0) {
            Py_DECREF(zero);
            return NULL;
        }
    }
    Py_DECREF(zero);
    Py_RETURN_TRUE;
}

/* ---- sums() ---- */

/* counter[key] += 1 (Counter's counting); -1 on an error */
static int count_one(PyObject *counter, PyObject *key) {
    PyObject *old = PyDict_GetItemWithError(counter, key);
    if (!old && PyErr_Occurred()) return -1;
    PyObject *one = PyLong_FromLong(1);
    PyObject *n = !one ? NULL : old ? PyNumber_Add(old, one) : Py_NewRef(one);
    Py_XDECREF(one);
    if (!n) return -1;
    int r = PyDict_SetItem(counter, key, n);
    Py_DECREF(n);
    return r;
}

/* counter[getattr(item, name)] += 1; -1 on an error */
static int count_attr(PyObject *counter, PyObject *item, PyObject *name) {
    PyObject *key = PyObject_GetAttr(item, name);
    if (!key) return -1;
    int r = count_one(counter, key);
    Py_DECREF(key);
    return r;
}

/* *sum = *sum + mapping[key]; -1 on an error */
static int add_item(PyObject **sum, PyObject *mapping, PyObject *key) {
    PyObject *v = PyObject_GetItem(mapping, key);
    if (!v) return -1;
    PyObject *s = PyNumber_Add(*sum, v);
    Py_DECREF(v);
    if (!s) return -1;
    Py_SETREF(*sum, s);
    return 0;
}

/* A sum of counts kept in C, key by key: `index` maps each key to its place in `keys` and
 * `values` (first seen first, as the dict the sums become keeps its keys). total.get(k, 0) + v
 * per item, each a lookup, an int made and a dict item replaced, was half of sums(). */
typedef struct {
    PyObject *key;
    Py_ssize_t place;
} Met;

typedef struct {
    PyObject *index, *keys;
    long long *values;
    Py_ssize_t cap;
    /* each key object met, by address, with its place: the same name objects come back file after
     * file, and finding one here is a fraction of a dict lookup (each held, so no address is
     * reused by another key while the sums are made) */
    Met *met;
    Py_ssize_t met_cap, met_n;
} Acc;

static inline size_t met_slot(const Acc *acc, PyObject *key) {
    return (size_t)(((uintptr_t)key >> 4) * 0x9E3779B97F4A7C15ULL) & (size_t)(acc->met_cap - 1);
}

/* key's place from `met`, or -1 */
static inline Py_ssize_t met_find(const Acc *acc, PyObject *key) {
    if (!acc->met_cap) return -1;
    for (size_t i = met_slot(acc, key);; i = (i + 1) & (size_t)(acc->met_cap - 1)) {
        if (acc->met[i].key == key) return acc->met[i].place;
        if (!acc->met[i].key) return -1;
    }
}

/* key kept in `met` at `place` (the table doubled at half full); -1 on no memory */
static int met_add(Acc *acc, PyObject *key, Py_ssize_t place) {
    if (2 * (acc->met_n + 1) > acc->met_cap) {
        Py_ssize_t old_cap = acc->met_cap, cap = old_cap ? 2 * old_cap : 256;
        Met *old = acc->met;
        acc->met = PyMem_Calloc((size_t)cap, sizeof *acc->met);
        if (!acc->met) {
            acc->met = old;
            PyErr_NoMemory();
            return -1;
        }
        acc->met_cap = cap;
        for (Py_ssize_t i = 0; i < old_cap; i++) {
            PyObject *k = old[i].key;
            if (!k) continue;
            size_t j = met_slot(acc, k);
            while (acc->met[j].key) j = (j + 1) & (size_t)(cap - 1);
            acc->met[j].key = k;
            acc->met[j].place = old[i].place;
        }
        PyMem_Free(old);
    }
    size_t j = met_slot(acc, key);
    while (acc->met[j].key) j = (j + 1) & (size_t)(acc->met_cap - 1);
    acc->met[j].key = Py_NewRef(key);
    acc->met[j].place = place;
    acc->met_n++;
    return 0;
}

static void acc_free(Acc *acc) {
    Py_XDECREF(acc->index);
    Py_XDECREF(acc->keys);
    PyMem_Free(acc->values);
    for (Py_ssize_t i = 0; i < acc->met_cap; i++) Py_XDECREF(acc->met[i].key);
    PyMem_Free(acc->met);
}

/* *sum += v for an exact int or a bool v: 0, or 1 (another type, or beyond a long long: the
 * caller's Python path sums it) */
static int add_int(long long *sum, PyObject *v) {
    if (!PyLong_CheckExact(v) && !PyBool_Check(v)) return 1;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 1;
    }
    return __builtin_add_overflow(*sum, x, sum) ? 1 : 0;
}

/* acc[k] += v for each item of the exact dict d: 0, 1 (a value add_int leaves to Python) or -1 */
static int acc_dict(Acc *acc, PyObject *d) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int r = 0;
    Py_INCREF(d);
    while (r == 0 && PyDict_Next(d, &pos, &key, &value)) {
        Py_INCREF(key);
        Py_INCREF(value);
        Py_ssize_t i = met_find(acc, key);
        PyObject *at = i >= 0 ? NULL : PyDict_GetItemWithError(acc->index, key);
        if (at) {  /* an equal key met before as another object */
            i = PyLong_AsSsize_t(at);
            if (met_add(acc, key, i) < 0) r = -1;
        } else if (i >= 0) {  /* this very key object met before */
        } else if (PyErr_Occurred()) {
            r = -1;
        } else {  /* a new key: its place, at the end */
            i = PyList_GET_SIZE(acc->keys);
            if (i == acc->cap) {
                Py_ssize_t cap = acc->cap ? 2 * acc->cap : 64;
                long long *values = PyMem_Realloc(acc->values, (size_t)cap * sizeof(long long));
                if (!values) {
                    PyErr_NoMemory();
                    r = -1;
                } else {
                    acc->values = values;
                    acc->cap = cap;
                }
            }
            PyObject *place = r ? NULL : PyLong_FromSsize_t(i);
            if (!place || PyDict_SetItem(acc->index, key, place) < 0 || PyList_Append(acc->keys, key) < 0
                || met_add(acc, key, i) < 0)
                r = -1;
            else acc->values[i] = 0;
            Py_XDECREF(place);
        }
        if (r == 0) r = add_int(&acc->values[i], value);
        Py_DECREF(key);
        Py_DECREF(value);
    }
    Py_DECREF(d);
    return r;
}

/* the dict of the sums, keys in the order first seen */
static PyObject *acc_dict_made(const Acc *acc) {
    PyObject *out = PyDict_New();
    for (Py_ssize_t i = 0; out && i < PyList_GET_SIZE(acc->keys); i++) {
        PyObject *v = PyLong_FromLongLong(acc->values[i]);
        if (!v || PyDict_SetItem(out, PyList_GET_ITEM(acc->keys, i), v) < 0) Py_CLEAR(out);
        Py_XDECREF(v);
    }
    return out;
}

/* getattr(f, name), from `attrs` (f's __dict__, or NULL) where it holds the name: what getattr
 * finds first there, the type having no data descriptor of that name (plain_type) */
static PyObject *attr_of(PyObject *f, PyObject *attrs, PyObject *name) {
    if (attrs) {
        PyObject *v = PyDict_GetItemWithError(attrs, name);
        if (v) return Py_NewRef(v);
        if (PyErr_Occurred()) return NULL;
    }
    return PyObject_GetAttr(f, name);  /* a class attribute (a field's default), or its error */
}

/* Whether the attributes sums() reads of an object of `type` are read as getattr reads them
 * from the object's __dict__ first: the generic getattr, a __dict__, and no data descriptor (a
 * property, a slot) of any of those names. Remembered in plain[0] (yes) or plain[1] (no), for
 * the run's one class of results: a getattr each was a fifth of sums(). */
static int plain_type(PyTypeObject *type, PyObject *int_names, PyObject *dict_names, PyObject **names,
                      PyTypeObject **plain) {
    int ok = type->tp_getattro == PyObject_GenericGetAttr && type->tp_dictoffset != 0;
    for (int g = 0; g < 3 && ok; g++) {
        PyObject *group = g == 0 ? int_names : g == 1 ? dict_names : NULL;
        Py_ssize_t n = group ? PyTuple_GET_SIZE(group) : 3;
        for (Py_ssize_t k = 0; k < n && ok; k++) {
            PyObject *name = group ? PyTuple_GET_ITEM(group, k) : names[k];
            if (!PyUnicode_CheckExact(name)) {
                ok = 0;
                break;
            }
            PyObject *descr = _PyType_Lookup(type, name);  /* borrowed */
            if (descr && Py_TYPE(descr)->tp_descr_set) ok = 0;
        }
    }
    plain[ok ? 0 : 1] = type;
    return ok;
}

static int sum_attrs(PyObject *f, PyObject *attrs, PyObject *int_names, PyObject *dict_names, PyObject *status,
                     long long *ints, Acc *dicts, PyObject **refs, PyObject *severities, PyObject *ids,
                     PyObject **names, Py_ssize_t ni, Py_ssize_t nd);

/* one file's part of sums(); 0, 1 (a dict attribute that is not an exact dict, a count that is
 * not an int) or -1 (an error) */
static int sum_file(PyObject *f, PyObject *int_names, PyObject *dict_names, PyObject *status,
                    long long *ints, Acc *dicts, PyObject **refs, PyObject *severities, PyObject *ids,
                    PyObject **names, PyTypeObject **plain) {
    Py_ssize_t ni = PyTuple_GET_SIZE(int_names), nd = PyTuple_GET_SIZE(dict_names);
    PyObject *attrs = NULL;  /* f's __dict__, where every name reads from it */
    if (Py_TYPE(f) == plain[0] || (Py_TYPE(f) != plain[1] && plain_type(Py_TYPE(f), int_names, dict_names, names, plain)))
        if (!(attrs = PyObject_GenericGetDict(f, NULL))) return -1;
    int r = sum_attrs(f, attrs, int_names, dict_names, status, ints, dicts, refs, severities, ids, names, ni, nd);
    Py_XDECREF(attrs);
    return r;
}

static int sum_attrs(PyObject *f, PyObject *attrs, PyObject *int_names, PyObject *dict_names, PyObject *status,
                     long long *ints, Acc *dicts, PyObject **refs, PyObject *severities, PyObject *ids,
                     PyObject **names, Py_ssize_t ni, Py_ssize_t nd) {
    PyObject *state = attr_of(f, attrs, names[0]);
    if (!state) return -1;
    int counted = count_one(status, state);
    Py_DECREF(state);
    if (counted < 0) return -1;
    for (Py_ssize_t k = 0; k < ni; k++) {
        PyObject *v = attr_of(f, attrs, PyTuple_GET_ITEM(int_names, k));
        if (!v) return -1;
        int r = add_int(&ints[k], v);
        Py_DECREF(v);
        if (r) return r;
    }
    for (Py_ssize_t k = 0; k < nd; k++) {
        PyObject *d = attr_of(f, attrs, PyTuple_GET_ITEM(dict_names, k));
        if (!d) return -1;
        int r = PyDict_CheckExact(d) ? acc_dict(&dicts[k], d) : 1;
        Py_DECREF(d);
        if (r) return r;
    }
    PyObject *references = attr_of(f, attrs, names[1]);
    if (!references) return -1;
    int r = add_item(&refs[0], references, names[3]) < 0 || add_item(&refs[1], references, names[4]) < 0 ? -1 : 0;
    Py_DECREF(references);
    if (r < 0) return -1;
    PyObject *diagnostics = attr_of(f, attrs, names[2]);
    if (!diagnostics) return -1;
    PyObject *it = PyObject_GetIter(diagnostics), *d;
    Py_DECREF(diagnostics);
    if (!it) return -1;
    while ((d = PyIter_Next(it))) {
        r = count_attr(severities, d, names[5]) < 0 || count_attr(ids, d, names[6]) < 0 ? -1 : 0;
        Py_DECREF(d);
        if (r < 0) break;
    }
    Py_DECREF(it);
    return r < 0 || PyErr_Occurred() ? -1 : 0;
}

#define SUMS_MAX 16  /* int and dict names each (the record has 8 and 5) */

PyObject *crecord_sums(PyObject *self, PyObject *args) {
    PyObject *files, *int_names, *dict_names;
    if (!PyArg_ParseTuple(args, "O!O!O!:sums", &PyList_Type, &files, &PyTuple_Type, &int_names,
                          &PyTuple_Type, &dict_names)) return NULL;
    Py_ssize_t ni = PyTuple_GET_SIZE(int_names), nd = PyTuple_GET_SIZE(dict_names);
    if (ni > SUMS_MAX || nd > SUMS_MAX) Py_RETURN_NONE;
    static const char *attrs[] = {"status", "references", "diagnostics", "converted", "unconverted",
                                  "severity", "id"};
    PyObject *names[7] = {NULL};
    long long sums[SUMS_MAX] = {0};
    Acc accs[SUMS_MAX] = {{0}};
    PyTypeObject *plain[2] = {NULL, NULL};  /* a class whose objects' attributes are read from __dict__, one not */
    PyObject *zero = PyLong_FromLong(0), *status = PyDict_New(), *severities = PyDict_New(), *ids = PyDict_New();
    PyObject *ints = PyList_New(ni), *dicts = PyList_New(nd), *refs[2] = {NULL, NULL}, *result = NULL;
    if (!zero || !status || !severities || !ids || !ints || !dicts) goto done;
    for (int k = 0; k < 7; k++)
        if (!(names[k] = PyUnicode_InternFromString(attrs[k]))) goto done;
    for (Py_ssize_t k = 0; k < nd; k++)
        if (!(accs[k].index = PyDict_New()) || !(accs[k].keys = PyList_New(0))) goto done;
    refs[0] = Py_NewRef(zero);
    refs[1] = Py_NewRef(zero);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(files); i++) {
        PyObject *f = Py_NewRef(PyList_GET_ITEM(files, i));
        int r = sum_file(f, int_names, dict_names, status, sums, accs, refs, severities, ids, names, plain);
        Py_DECREF(f);
        if (r < 0) goto done;
        if (r > 0) {  /* not what this was written for: the caller's Python path counts */
            result = Py_NewRef(Py_None);
            goto done;
        }
    }
    for (Py_ssize_t k = 0; k < ni; k++)
        if (!(PyList_SET_ITEM(ints, k, PyLong_FromLongLong(sums[k])), PyList_GET_ITEM(ints, k))) goto done;
    for (Py_ssize_t k = 0; k < nd; k++)
        if (!(PyList_SET_ITEM(dicts, k, acc_dict_made(&accs[k])), PyList_GET_ITEM(dicts, k))) goto done;
    result = Py_BuildValue("(OOOOOOO)", status, ints, dicts, refs[0], refs[1], severities, ids);
done:
    for (int k = 0; k < 7; k++) Py_XDECREF(names[k]);
    for (Py_ssize_t k = 0; k < nd; k++) {
        acc_free(&accs[k]);
    }
    Py_XDECREF(zero);
    Py_XDECREF(status);
    Py_XDECREF(severities);
    Py_XDECREF(ids);
    Py_XDECREF(ints);
    Py_XDECREF(dicts);
    Py_XDECREF(refs[0]);
    Py_XDECREF(refs[1]);
    return result;
}

/* ---- line_count() ---- */

#include "_cnewlines.h"

/* how many of the n bytes at p are '\n' (`musify_newlines_1`, shared with `_cscan`) */
Py_ssize_t crecord_newlines_1(const unsigned char *p, Py_ssize_t n) {
    return musify_newlines_1(p, n);
}

PyObject *crecord_line_count(PyObject *self, PyObject *text) {
    (void)self;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "line_count takes a str");
        return NULL;
    }
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), count = 0;
    const void *data = PyUnicode_DATA(text);
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        count = crecord_newlines_1((const unsigned char *)data, n);
        break;
    case PyUnicode_2BYTE_KIND:
        for (Py_ssize_t i = 0; i < n; i++) count += ((const Py_UCS2 *)data)[i] == '\n';
        break;
    default:
        for (Py_ssize_t i = 0; i < n; i++) count += ((const Py_UCS4 *)data)[i] == '\n';
    }
    return PyLong_FromSsize_t(count + 1);
}

/* ---- sorted_counts() ---- */

/* whether the dict's keys are exact str in strictly rising order (a file's facts always are:
 * the passes write them in that order) */
static int keys_in_order(PyObject *d) {
    PyObject *key, *value, *prev = NULL;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d, &pos, &key, &value)) {
        if (!PyUnicode_CheckExact(key) || (prev && str_order(prev, key) >= 0)) return 0;
        prev = key;
    }
    return 1;
}

/* dict(sorted(d.items())) of a dict (a Counter too: the answer is a plain dict), the items sorted
 * as `sorted` sorts them; a dict of fewer than two items, or already in key order, copied as
 * `dict(d)` copies it (one copy of the table, no sort and no item inserted one by one) */
PyObject *crecord_sorted_counts(PyObject *self, PyObject *d) {
    (void)self;
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError, "sorted_counts takes a dict");
        return NULL;
    }
    if (PyDict_GET_SIZE(d) < 2 || keys_in_order(d)) return PyDict_Copy(d);
    PyObject *items = PyDict_Items(d), *out = NULL;
    if (!items || PyList_Sort(items) < 0) goto done;
    Py_ssize_t n = PyList_GET_SIZE(items);
    out = n > 5 ? _PyDict_NewPresized(n) : PyDict_New();
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        if (PyDict_SetItem(out, PyTuple_GET_ITEM(item, 0), PyTuple_GET_ITEM(item, 1)) < 0) Py_CLEAR(out);
    }
done:
    Py_XDECREF(items);
    return out;
}
