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
static inline int add_int(long long *sum, PyObject *v) {
    if (!PyLong_CheckExact(v) && !PyBool_Check(v)) return 1;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 1;
    }
    return __builtin_add_overflow(*sum, x, sum) ? 1 : 0;
}

/* key's place in acc (a new key given one, at the end, its sum 0), or -1 on an error */
static Py_ssize_t acc_place(Acc *acc, PyObject *key) {
    Py_ssize_t i = met_find(acc, key);
    if (i >= 0) return i;  /* this very key object met before */
    PyObject *at = PyDict_GetItemWithError(acc->index, key);
    if (at) {  /* an equal key met before as another object */
        i = PyLong_AsSsize_t(at);
        return met_add(acc, key, i) < 0 ? -1 : i;
    }
    if (PyErr_Occurred()) return -1;
    i = PyList_GET_SIZE(acc->keys);  /* a new key: its place, at the end */
    if (i == acc->cap) {
        Py_ssize_t cap = acc->cap ? 2 * acc->cap : 64;
        long long *values = PyMem_Realloc(acc->values, (size_t)cap * sizeof(long long));
        if (!values) {
            PyErr_NoMemory();
            return -1;
        }
        acc->values = values;
        acc->cap = cap;
    }
    PyObject *place = PyLong_FromSsize_t(i);
    int r = !place || PyDict_SetItem(acc->index, key, place) < 0 || PyList_Append(acc->keys, key) < 0
            || met_add(acc, key, i) < 0 ? -1 : 0;
    Py_XDECREF(place);
    if (r < 0) return -1;
    acc->values[i] = 0;
    return i;
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
        Py_ssize_t i = acc_place(acc, key);
        r = i < 0 ? -1 : add_int(&acc->values[i], value);
        Py_DECREF(key);
        Py_DECREF(value);
    }
    Py_DECREF(d);
    return r;
}

/* acc[key] += 1 (Counter's counting, kept in C as the dicts' sums are); -1 on an error */
static int acc_count(Acc *acc, PyObject *key) {
    Py_INCREF(key);
    Py_ssize_t i = acc_place(acc, key);
    Py_DECREF(key);
    if (i < 0) return -1;
    acc->values[i]++;
    return 0;
}

/* acc[getattr(item, name)] += 1; -1 on an error */
static int acc_count_attr(Acc *acc, PyObject *item, PyObject *name) {
    PyObject *key = PyObject_GetAttr(item, name);
    if (!key) return -1;
    int r = acc_count(acc, key);
    Py_DECREF(key);
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

#define SUMS_MAX 16  /* int and dict names each (the record has 8 and 5) */
#define ROLES (3 + 2 * SUMS_MAX)  /* the names read of a file: status, ints, dicts, references, diagnostics */
#define SEEN 64  /* places of a __dict__ remembered */

/* What sums() gathers, and how it reads each file. */
typedef struct {
    Py_ssize_t ni, nd;
    /* each name read of a file by its role: [0] status, [1, 1 + ni) the ints, then the dicts,
     * [1 + ni + nd] references, [2 + ni + nd] diagnostics (borrowed: the arguments', or `own`'s) */
    PyObject *role_names[ROLES];
    int roles;
    PyObject *own[5];  /* "status", "references", "diagnostics", "severity", "id", interned */
    PyObject *converted, *unconverted;  /* interned */
    /* the keys of the last __dict__ walked, by place, each with its role (-1: none): every result
     * of a run stores its fields in the same order, so the next file's keys are met there (held,
     * so no address is reused by another key while the sums are made) */
    PyObject *seen[SEEN];
    signed char seen_role[SEEN];
    long long ints[SUMS_MAX], refs[2];
    Acc dicts[SUMS_MAX], status, severities, ids;
    PyTypeObject *plain[2];  /* a class whose objects' attributes are read from __dict__, one not */
} Sums;

/* Whether the attributes sums() reads of an object of `type` are read as getattr reads them
 * from the object's __dict__ first: the generic getattr, a __dict__, and no data descriptor (a
 * property, a slot) of any of those names. Remembered in plain[0] (yes) or plain[1] (no), for
 * the run's one class of results: a getattr each was a fifth of sums(). */
static int plain_type(Sums *s, PyTypeObject *type) {
    int ok = type->tp_getattro == PyObject_GenericGetAttr && type->tp_dictoffset != 0;
    for (int k = 0; k < s->roles && ok; k++) {
        PyObject *name = s->role_names[k];
        if (!PyUnicode_CheckExact(name)) {
            ok = 0;
            break;
        }
        PyObject *descr = _PyType_Lookup(type, name);  /* borrowed */
        if (descr && Py_TYPE(descr)->tp_descr_set) ok = 0;
    }
    s->plain[ok ? 0 : 1] = type;
    return ok;
}

/* got[role] = a new reference to each value `attrs` stores under one of the role names (the
 * very name object: any other key equal to it is left to attr_of), in one walk of the dict: a
 * look-up by name each was a third of sums() */
static void stored_fields(Sums *s, PyObject *attrs, PyObject **got) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int place = 0, found = 0;
    while (found < s->roles && PyDict_Next(attrs, &pos, &key, &value)) {
        int role = -1;
        if (place < SEEN && s->seen[place] == key) {
            role = s->seen_role[place];
        } else {
            for (int k = 0; k < s->roles; k++)
                if (s->role_names[k] == key) {
                    role = k;
                    break;
                }
            if (place < SEEN) {
                Py_XSETREF(s->seen[place], Py_NewRef(key));
                s->seen_role[place] = (signed char)role;
            }
        }
        if (role >= 0 && !got[role]) {
            got[role] = Py_NewRef(value);
            found++;
        }
        place++;
    }
}

/* the value of role k: got[k] (taken), else read as getattr reads it */
static PyObject *field(PyObject **got, int k, PyObject *f, PyObject *attrs, PyObject *name) {
    PyObject *v = got[k];
    got[k] = NULL;
    return v ? v : attr_of(f, attrs, name);
}

/* refs[k] += references[name] for an exact dict of ints: 0, 1 (anything else: Python's path) or -1 */
static int add_ref(long long *sum, PyObject *references, PyObject *name) {
    PyObject *v = PyDict_GetItemWithError(references, name);
    return v ? add_int(sum, v) : PyErr_Occurred() ? -1 : 1;
}

/* one file's part of sums(), its attributes in `got` where stored_fields found them; 0, 1 (a dict
 * attribute that is not an exact dict, a count that is not an int) or -1 (an error) */
static int sum_attrs(Sums *s, PyObject *f, PyObject *attrs, PyObject **got) {
    PyObject *state = field(got, 0, f, attrs, s->role_names[0]);
    if (!state) return -1;
    int counted = acc_count(&s->status, state);
    Py_DECREF(state);
    if (counted < 0) return -1;
    for (Py_ssize_t k = 0; k < s->ni; k++) {
        PyObject *v = field(got, (int)(1 + k), f, attrs, s->role_names[1 + k]);
        if (!v) return -1;
        int r = add_int(&s->ints[k], v);
        Py_DECREF(v);
        if (r) return r;
    }
    for (Py_ssize_t k = 0; k < s->nd; k++) {
        PyObject *d = field(got, (int)(1 + s->ni + k), f, attrs, s->role_names[1 + s->ni + k]);
        if (!d) return -1;
        int r = PyDict_CheckExact(d) ? acc_dict(&s->dicts[k], d) : 1;
        Py_DECREF(d);
        if (r) return r;
    }
    int at = (int)(1 + s->ni + s->nd);
    PyObject *references = field(got, at, f, attrs, s->role_names[at]);
    if (!references) return -1;
    int r = !PyDict_CheckExact(references) ? 1 : add_ref(&s->refs[0], references, s->converted);
    if (r == 0) r = add_ref(&s->refs[1], references, s->unconverted);
    Py_DECREF(references);
    if (r) return r;
    PyObject *diagnostics = field(got, at + 1, f, attrs, s->role_names[at + 1]);
    if (!diagnostics) return -1;
    PyObject *it = PyObject_GetIter(diagnostics), *d;
    Py_DECREF(diagnostics);
    if (!it) return -1;
    while ((d = PyIter_Next(it))) {
        r = acc_count_attr(&s->severities, d, s->own[3]) < 0 || acc_count_attr(&s->ids, d, s->own[4]) < 0 ? -1 : 0;
        Py_DECREF(d);
        if (r < 0) break;
    }
    Py_DECREF(it);
    return r < 0 || PyErr_Occurred() ? -1 : 0;
}

/* one file's part of sums(): as sum_attrs */
static int sum_file(Sums *s, PyObject *f) {
    PyObject *attrs = NULL;  /* f's __dict__, where every name reads from it */
    PyObject *got[ROLES] = {NULL};
    if (Py_TYPE(f) == s->plain[0] || (Py_TYPE(f) != s->plain[1] && plain_type(s, Py_TYPE(f)))) {
        if (!(attrs = PyObject_GenericGetDict(f, NULL))) return -1;
        if (PyDict_CheckExact(attrs)) stored_fields(s, attrs, got);
    }
    int r = sum_attrs(s, f, attrs, got);
    for (int k = 0; k < s->roles; k++) Py_XDECREF(got[k]);
    Py_XDECREF(attrs);
    return r;
}

static int acc_init(Acc *acc) { return (acc->index = PyDict_New()) && (acc->keys = PyList_New(0)) ? 0 : -1; }

static void sums_free(Sums *s) {
    for (int k = 0; k < 5; k++) Py_XDECREF(s->own[k]);
    Py_XDECREF(s->converted);
    Py_XDECREF(s->unconverted);
    for (int k = 0; k < SEEN; k++) Py_XDECREF(s->seen[k]);
    for (Py_ssize_t k = 0; k < s->nd; k++) acc_free(&s->dicts[k]);
    acc_free(&s->status);
    acc_free(&s->severities);
    acc_free(&s->ids);
}

/* the answer: (status, ints, dicts, converted, unconverted, severities, ids) */
static PyObject *sums_made(const Sums *s) {
    PyObject *ints = PyList_New(s->ni), *dicts = PyList_New(s->nd), *result = NULL;
    PyObject *status = acc_dict_made(&s->status), *severities = acc_dict_made(&s->severities);
    PyObject *ids = acc_dict_made(&s->ids);
    PyObject *converted = PyLong_FromLongLong(s->refs[0]), *unconverted = PyLong_FromLongLong(s->refs[1]);
    if (!ints || !dicts || !status || !severities || !ids || !converted || !unconverted) goto done;
    for (Py_ssize_t k = 0; k < s->ni; k++)
        if (!(PyList_SET_ITEM(ints, k, PyLong_FromLongLong(s->ints[k])), PyList_GET_ITEM(ints, k))) goto done;
    for (Py_ssize_t k = 0; k < s->nd; k++)
        if (!(PyList_SET_ITEM(dicts, k, acc_dict_made(&s->dicts[k])), PyList_GET_ITEM(dicts, k))) goto done;
    result = PyTuple_Pack(7, status, ints, dicts, converted, unconverted, severities, ids);
done:
    Py_XDECREF(ints);
    Py_XDECREF(dicts);
    Py_XDECREF(status);
    Py_XDECREF(severities);
    Py_XDECREF(ids);
    Py_XDECREF(converted);
    Py_XDECREF(unconverted);
    return result;
}

PyObject *crecord_sums(PyObject *self, PyObject *args) {
    PyObject *files, *int_names, *dict_names;
    if (!PyArg_ParseTuple(args, "O!O!O!:sums", &PyList_Type, &files, &PyTuple_Type, &int_names,
                          &PyTuple_Type, &dict_names)) return NULL;
    Py_ssize_t ni = PyTuple_GET_SIZE(int_names), nd = PyTuple_GET_SIZE(dict_names);
    if (ni > SUMS_MAX || nd > SUMS_MAX) Py_RETURN_NONE;
    static const char *own[] = {"status", "references", "diagnostics", "severity", "id"};
    Sums *s = PyMem_Calloc(1, sizeof *s);
    if (!s) return PyErr_NoMemory();
    s->ni = ni, s->nd = nd;
    s->roles = (int)(3 + ni + nd);
    PyObject *result = NULL;
    for (int k = 0; k < 5; k++)
        if (!(s->own[k] = PyUnicode_InternFromString(own[k]))) goto done;
    if (!(s->converted = PyUnicode_InternFromString("converted"))
        || !(s->unconverted = PyUnicode_InternFromString("unconverted"))) goto done;
    s->role_names[0] = s->own[0];
    for (Py_ssize_t k = 0; k < ni; k++) s->role_names[1 + k] = PyTuple_GET_ITEM(int_names, k);
    for (Py_ssize_t k = 0; k < nd; k++) s->role_names[1 + ni + k] = PyTuple_GET_ITEM(dict_names, k);
    s->role_names[1 + ni + nd] = s->own[1];
    s->role_names[2 + ni + nd] = s->own[2];
    for (Py_ssize_t k = 0; k < nd; k++)
        if (acc_init(&s->dicts[k]) < 0) goto done;
    if (acc_init(&s->status) < 0 || acc_init(&s->severities) < 0 || acc_init(&s->ids) < 0) goto done;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(files); i++) {
        PyObject *f = Py_NewRef(PyList_GET_ITEM(files, i));
        int r = sum_file(s, f);
        Py_DECREF(f);
        if (r < 0) goto done;
        if (r > 0) {  /* not what this was written for: the caller's Python path counts */
            result = Py_NewRef(Py_None);
            goto done;
        }
    }
    result = sums_made(s);
done:
    sums_free(s);
    PyMem_Free(s);
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
