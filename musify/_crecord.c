/* The run record's per-file work in C: a file's edit list rendered and counted, and a file's
 * whole entry rendered as compact JSON (musify/runner.py `_fill`, musify/records.py).
 *
 * Every file of a run goes through both once; in Python they were a tuple, a formatted string
 * and a dict lookup per edit, then a dict of the entry's fields for the json module, most of the
 * record's cost on a tree of many small files. The Python code stays the reference (and the path
 * under MUSIFY_PURE_PYTHON=1 or without a compiler); tests/test_crecord_equivalence.py proves both
 * give the same bytes. Each function answers None, and the caller takes the Python path, for
 * anything it was not written for, so the answer is always the Python one.
 *
 * record(text, rows, starts, fields, memo, render, ascii)
 *     -> (json | None, lines_touched, bytes_changed, by_library, by_kind, renamed, includes, shims,
 *         inferred, converted) | None
 *   rows: an `EditList`'s array (start, end, index into `fields` per row); starts: a `LineIndex`'s
 *   line starts (a list of ints or an array of 8-byte ints); memo[fields[i]]: what an edit with
 *   those fields adds, (library, kind, category, the name it counts as converted or None,
 *   inferred, the JSON after its "old") (runner._count_fields). The JSON (when `render`) is what
 *   packed_edits.PackedEdits renders; lines_touched counts the changes of start line from edit to
 *   edit (plus one); bytes_changed sums (end - start) when `ascii` (a character is a byte), else
 *   the UTF-8 length of each replaced text (a lone surrogate from surrogateescape is one byte);
 *   the rest is what runner._tally sums, its dicts in key order. None unless every span lies in
 *   the text in start order and every field tuple used is in the memo.
 * entry(keys, values, raw_at, raw, shape=None) -> str | None: "{" key0 value0 "," key1 value1 ... "}"
 *   with each value as json.dumps(value, separators=(",", ":")) writes it, and `raw` (ASCII JSON
 *   text) written as it is for value `raw_at` when it is not None. `shape` = (class, key texts,
 *   attribute names, alternatives): an item of a list of the entry's that is exactly of that class
 *   is written as the object {key: getattr(item, attribute) or getattr(item, alternative)}
 *   (alternative None: the attribute as it is), as the class's `to_json` would make it (an
 *   attribute that is an object slot of the class, read from the slot itself: 11,650 diagnostics
 *   on the CUDA toolkit's headers, 13 attributes each). None for a
 *   value of any type but exact str, int, float, bool, None, list, tuple or dict with str keys.
 * add_counts(total, counts) -> bool: total[k] = total.get(k, 0) + v for each item of each dict
 *   of the list `counts` in turn, for the record's totals; False, and nothing done, unless every
 *   one is an exact dict.
 * sums(files, int_names, dict_names) -> (status, ints, dicts, converted, unconverted, severities,
 *   ids) | None: what records.compute_totals gathers, in one pass over the files (each file's
 *   attributes read together: thirteen passes over a big run's scattered results cost more in
 *   memory reads than in arithmetic). status: occurrences of each `f.status`; ints: for each name,
 *   the sum of that attribute from 0; dicts: for each name, add_counts of that attribute's dicts;
 *   converted, unconverted: the sums of `f.references[...]`; severities, ids: occurrences of each
 *   `d.severity` and `d.id` over every `f.diagnostics`. None (nothing counted) when some file's
 *   dict is not an exact dict. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <string.h>

/* ---- an output buffer of ASCII bytes ---- */

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
} Out;

static int out_grow(Out *o, Py_ssize_t more) {
    if (o->len + more <= o->cap) return 0;
    Py_ssize_t cap = o->cap ? o->cap : 256;
    while (cap < o->len + more) cap *= 2;
    char *b = PyMem_Realloc(o->buf, (size_t)cap);
    if (!b) {
        PyErr_NoMemory();
        return -1;
    }
    o->buf = b;
    o->cap = cap;
    return 0;
}

static inline int out_write(Out *o, const char *s, Py_ssize_t n) {
    if (out_grow(o, n) < 0) return -1;
    memcpy(o->buf + o->len, s, (size_t)n);
    o->len += n;
    return 0;
}

#define OUT_LIT(o, s) out_write((o), (s), (Py_ssize_t)sizeof(s) - 1)

static int out_int(Out *o, long long v) {
    char tmp[24];
    int n = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[n++] = '-';
    if (out_grow(o, n) < 0) return -1;
    while (n) o->buf[o->len++] = tmp[--n];
    return 0;
}

/* an ASCII str's characters as they are */
static int out_ascii(Out *o, PyObject *s) {
    return out_write(o, (const char *)PyUnicode_DATA(s), PyUnicode_GET_LENGTH(s));
}

static PyObject *out_str(Out *o) {
    PyObject *s = PyUnicode_New(o->len, 127);
    if (s) memcpy(PyUnicode_DATA(s), o->buf, (size_t)o->len);
    return s;
}

/* ---- JSON strings, as json.encoder.encode_basestring_ascii writes them ---- */

static const char HEX[] = "0123456789abcdef";

static inline int plain_char(Py_UCS4 c) { return c >= ' ' && c <= '~' && c != '\\' && c != '"'; }

static int out_u16(Out *o, Py_UCS4 c) {
    char u[6] = {'\\', 'u', HEX[(c >> 12) & 15], HEX[(c >> 8) & 15], HEX[(c >> 4) & 15], HEX[c & 15]};
    return out_write(o, u, 6);
}

/* text[lo:hi] quoted */
static int out_quoted(Out *o, PyObject *text, Py_ssize_t lo, Py_ssize_t hi) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (out_grow(o, hi - lo + 2) < 0) return -1;
    o->buf[o->len++] = '"';
    for (Py_ssize_t i = lo; i < hi; i++) {
        if (kind == PyUnicode_1BYTE_KIND) {  /* a run of plain characters copied at once */
            const Py_UCS1 *b = (const Py_UCS1 *)data;
            Py_ssize_t j = i;
            while (j < hi && plain_char(b[j])) j++;
            if (j > i) {
                if (out_write(o, (const char *)b + i, j - i) < 0) return -1;
                if (j == hi) break;
                i = j;
            }
        }
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (plain_char(c)) {  /* room for the rest as plain characters was made: more only after an escape */
            if (o->len >= o->cap && out_grow(o, 1) < 0) return -1;
            o->buf[o->len++] = (char)c;
            continue;
        }
        int r;
        switch (c) {
        case '\\': r = OUT_LIT(o, "\\\\"); break;
        case '"': r = OUT_LIT(o, "\\\""); break;
        case '\b': r = OUT_LIT(o, "\\b"); break;
        case '\f': r = OUT_LIT(o, "\\f"); break;
        case '\n': r = OUT_LIT(o, "\\n"); break;
        case '\r': r = OUT_LIT(o, "\\r"); break;
        case '\t': r = OUT_LIT(o, "\\t"); break;
        default:
            if (c >= 0x10000) {
                Py_UCS4 v = c - 0x10000;
                r = out_u16(o, 0xd800 | ((v >> 10) & 0x3ff));
                if (r == 0) r = out_u16(o, 0xdc00 | (v & 0x3ff));
            } else {
                r = out_u16(o, c);
            }
        }
        if (r < 0 || out_grow(o, hi - i) < 0) return -1;
    }
    if (out_grow(o, 1) < 0) return -1;
    o->buf[o->len++] = '"';
    return 0;
}

/* ---- integer sequences: an array's buffer or a list of ints ---- */

typedef struct {
    Py_buffer view;
    int has_view, wide;
    PyObject *list;
    Py_ssize_t n;
} Ints;

static int ints_open(PyObject *obj, Ints *r) {
    r->has_view = 0;
    r->list = NULL;
    if (PyList_CheckExact(obj)) {
        r->list = obj;
        r->n = PyList_GET_SIZE(obj);
        return 1;
    }
    if (PyObject_GetBuffer(obj, &r->view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        return 0;
    }
    r->has_view = 1;
    const char *f = r->view.format ? r->view.format : "B";
    if (r->view.itemsize == 4 && (f[0] == 'i' || f[0] == 'l') && f[1] == 0) r->wide = 0;
    else if (r->view.itemsize == 8 && (f[0] == 'q' || f[0] == 'l') && f[1] == 0) r->wide = 1;
    else return 0;
    r->n = r->view.len / r->view.itemsize;
    return 1;
}

static void ints_close(Ints *r) {
    if (r->has_view) PyBuffer_Release(&r->view);
    r->has_view = 0;
}

/* the value at i; -1 with an error set (or an overflow) reads as a failure via *bad */
static inline long long ints_get(const Ints *r, Py_ssize_t i, int *bad) {
    if (r->list) {
        PyObject *v = PyList_GET_ITEM(r->list, i);
        if (!PyLong_CheckExact(v)) {
            *bad = 1;
            return 0;
        }
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            *bad = 1;
        }
        return x;
    }
    return r->wide ? ((const long long *)r->view.buf)[i] : (long long)((const int *)r->view.buf)[i];
}

/* bisect.bisect_right(starts, x, lo): galloping from `lo` first (the next edit is most often a
 * few lines on, and the lines near the last one read are the ones still in the cache) */
static Py_ssize_t bisect_right(const Ints *starts, long long x, Py_ssize_t lo, int *bad) {
    Py_ssize_t hi = lo, step = 1, n = starts->n;
    while (hi < n && ints_get(starts, hi, bad) <= x) {
        lo = hi + 1;
        hi = lo + step;
        step *= 2;
    }
    if (hi > n) hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (x < ints_get(starts, mid, bad)) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/* ---- record(): the counts ---- */

/* d[key] = d.get(key, 0) + count */
static int bump(PyObject *d, PyObject *key, Py_ssize_t count) {
    PyObject *old = PyDict_GetItemWithError(d, key);
    if (!old && PyErr_Occurred()) return -1;
    PyObject *sum;
    if (old) {
        PyObject *c = PyLong_FromSsize_t(count);
        if (!c) return -1;
        sum = PyNumber_Add(old, c);
        Py_DECREF(c);
    } else {
        sum = PyLong_FromSsize_t(count);
    }
    if (!sum) return -1;
    int r = PyDict_SetItem(d, key, sum);
    Py_DECREF(sum);
    return r;
}

/* dict(sorted(d.items())) (its keys are str: distinct, so the items sort by key) */
static PyObject *sorted_dict(PyObject *d) {
    if (PyDict_GET_SIZE(d) < 2) return Py_NewRef(d);
    PyObject *keys = PyDict_Keys(d), *out = NULL;
    if (!keys || PyList_Sort(keys) < 0) goto done;
    out = PyDict_New();
    if (!out) goto done;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keys); i++) {
        PyObject *k = PyList_GET_ITEM(keys, i), *v = PyDict_GetItemWithError(d, k);
        if (!v || PyDict_SetItem(out, k, v) < 0) {
            if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, k);
            Py_CLEAR(out);
            goto done;
        }
    }
done:
    Py_XDECREF(keys);
    return out;
}

/* ---- record() ---- */

/* a key of one of the file's counts (library, kind, renamed name) and what one field tuple adds to it */
typedef struct {
    PyObject *key;
    Py_ssize_t count;
} KeyCount;

/* PyUnicode_Compare of two exact str (the order of their code points), with memcmp for two
 * one-byte strings (whose bytes are their code points) */
static int str_order(PyObject *a, PyObject *b) {
    if (a == b) return 0;
    if (PyUnicode_KIND(a) == PyUnicode_1BYTE_KIND && PyUnicode_KIND(b) == PyUnicode_1BYTE_KIND) {
        Py_ssize_t la = PyUnicode_GET_LENGTH(a), lb = PyUnicode_GET_LENGTH(b);
        int c = memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)(la < lb ? la : lb));
        return c ? c : (la > lb) - (la < lb);
    }
    return PyUnicode_Compare(a, b);
}

static int key_order(const void *a, const void *b) {
    return str_order(((const KeyCount *)a)->key, ((const KeyCount *)b)->key);
}

/* dict(sorted(sums.items())) of the pairs, `sums` adding the counts of equal keys, every key an
 * exact str (compared by code points, as `sorted` compares them): the pairs sorted, each run of
 * equal keys summed and set once. A dict per count, bumped tuple by tuple and then sorted into a
 * second dict, was half of `record` on a small file. */
static PyObject *summed_dict(KeyCount *pairs, Py_ssize_t n) {
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    if (n > 16) {
        qsort(pairs, (size_t)n, sizeof *pairs, key_order);
    } else {  /* a few keys (most files): an insertion sort, without qsort's set-up */
        for (Py_ssize_t i = 1; i < n; i++) {
            KeyCount x = pairs[i];
            Py_ssize_t j = i;
            for (; j > 0 && str_order(pairs[j - 1].key, x.key) > 0; j--)
                pairs[j] = pairs[j - 1];
            pairs[j] = x;
        }
    }
    for (Py_ssize_t i = 0; i < n;) {
        Py_ssize_t sum = pairs[i].count, j = i + 1;
        while (j < n && str_order(pairs[j].key, pairs[i].key) == 0) sum += pairs[j++].count;
        PyObject *v = PyLong_FromSsize_t(sum);
        int r = v ? PyDict_SetItem(out, pairs[i].key, v) : -1;
        Py_XDECREF(v);
        if (r < 0) {
            Py_DECREF(out);
            return NULL;
        }
        i = j;
    }
    return out;
}

/* the three counts as summed_dict makes them: 1 done, 0 when a key is not an exact str (the
 * caller's dicts then), -1 on an error */
static int summed_dicts(PyObject *const *infos, const Py_ssize_t *count, Py_ssize_t nfields, PyObject **out) {
    KeyCount *pairs = PyMem_Malloc(sizeof(KeyCount) * 3 * (size_t)(nfields ? nfields : 1));
    if (!pairs) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t n[3] = {0, 0, 0};
    int done = 1;
    for (Py_ssize_t i = 0; i < nfields && done; i++) {
        if (!count[i]) continue;
        for (int k = 0; k < 3; k++) {
            PyObject *key = PyTuple_GET_ITEM(infos[i], k == 2 ? 3 : k);  /* library, kind, renamed name */
            if (k == 2 && key == Py_None) continue;
            if (!PyUnicode_CheckExact(key)) {
                done = 0;
                break;
            }
            pairs[k * nfields + n[k]++] = (KeyCount){key, count[i]};
        }
    }
    for (int k = 0; k < 3 && done; k++)
        if (!(out[k] = summed_dict(pairs + k * nfields, n[k]))) done = -1;
    PyMem_Free(pairs);
    return done;
}

/* the counts of a file from how many of its edits have each field tuple and what each tuple
 * adds (`infos`, the memo's values): the tuple `record` answers after the JSON, lines, bytes */
static PyObject *tally(PyObject *const *infos, const Py_ssize_t *count, Py_ssize_t nfields, PyObject *json,
                       long long touched, long long changed) {
    PyObject *by[3] = {NULL, NULL, NULL}, *sorted[3] = {NULL, NULL, NULL}, *result = NULL;
    Py_ssize_t includes = 0, shims = 0, inferred = 0, converted = 0;  /* by library, kind, renamed name */
    int summed = summed_dicts(infos, count, nfields, sorted);
    if (summed < 0) goto done;
    if (!summed) {
        for (int k = 0; k < 3; k++) {
            Py_CLEAR(sorted[k]);
            if (!(by[k] = PyDict_New())) goto done;
        }
    }
    for (Py_ssize_t i = 0; i < nfields; i++) {
        if (!count[i]) continue;
        PyObject *info = infos[i], *category = PyTuple_GET_ITEM(info, 2), *renames = PyTuple_GET_ITEM(info, 3);
        if (!summed && (bump(by[0], PyTuple_GET_ITEM(info, 0), count[i]) < 0
                        || bump(by[1], PyTuple_GET_ITEM(info, 1), count[i]) < 0
                        || (renames != Py_None && bump(by[2], renames, count[i]) < 0)))
            goto done;
        if (PyUnicode_Check(category)) {
            if (PyUnicode_CompareWithASCIIString(category, "include") == 0) includes += count[i];
            else if (PyUnicode_CompareWithASCIIString(category, "shim-include") == 0) shims += count[i];
        }
        if (renames != Py_None) converted += count[i];
        int truth = PyObject_IsTrue(PyTuple_GET_ITEM(info, 4));
        if (truth < 0) goto done;
        if (truth) inferred += count[i];
    }
    for (int k = 0; k < 3 && !summed; k++)
        if (!(sorted[k] = sorted_dict(by[k]))) goto done;
    result = Py_BuildValue("(OLLOOOnnnn)", json, touched, changed, sorted[0], sorted[1], sorted[2], includes, shims,
                           inferred, converted);
done:
    for (int k = 0; k < 3; k++) {
        Py_XDECREF(by[k]);
        Py_XDECREF(sorted[k]);
    }
    return result;
}

static PyObject *record(PyObject *self, PyObject *args) {
    PyObject *text, *rows_obj, *starts_obj, *fields, *memo;
    int render, ascii;
    if (!PyArg_ParseTuple(args, "UOOO!O!pp:record", &text, &rows_obj, &starts_obj, &PyList_Type, &fields, &PyDict_Type,
                          &memo, &render, &ascii))
        return NULL;
    Ints rows, starts;
    if (!ints_open(rows_obj, &rows) || rows.list) {
        ints_close(&rows);
        Py_RETURN_NONE;
    }
    if (!ints_open(starts_obj, &starts)) {
        ints_close(&starts);
        ints_close(&rows);
        Py_RETURN_NONE;
    }
    PyObject *result = NULL, *json = NULL, **infos = NULL;
    Py_ssize_t *count = NULL, nfields = PyList_GET_SIZE(fields);
    Out o = {NULL, 0, 0};
    int bad = 0;
    Py_ssize_t n = rows.n / 3, len = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (rows.n % 3 || starts.n == 0) goto fallback;
    count = PyMem_Calloc((size_t)(nfields ? nfields : 1), sizeof(Py_ssize_t));
    infos = PyMem_Calloc((size_t)(nfields ? nfields : 1), sizeof(PyObject *));
    if (!count || !infos) {
        PyErr_NoMemory();
        goto done;
    }
    if (render && (out_grow(&o, 160 * n + 2) < 0 || OUT_LIT(&o, "[") < 0)) goto done;  /* room for most lists at once */
    long long prev_start = -1, touched = 0, changed = 0;
    Py_ssize_t at_line = 0, prev_line = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        long long s = ints_get(&rows, 3 * k, &bad), e = ints_get(&rows, 3 * k + 1, &bad);
        long long f = ints_get(&rows, 3 * k + 2, &bad);
        if (s < prev_start || s < 0 || e < s || e > len || f < 0 || f >= nfields) goto fallback;
        if (!count[f]++) {  /* the first edit with these fields: what they add, from the memo */
            PyObject *info = PyDict_GetItemWithError(memo, PyList_GET_ITEM(fields, (Py_ssize_t)f));
            if (!info) goto fallback;  /* not counted yet (or an error): the caller's path */
            if (!PyTuple_CheckExact(info) || PyTuple_GET_SIZE(info) != 6) goto fallback;
            PyObject *tail = PyTuple_GET_ITEM(info, 5);
            if (!PyUnicode_CheckExact(tail) || !PyUnicode_IS_ASCII(tail)) goto fallback;
            infos[f] = Py_NewRef(info);
        }
        /* the start's line: from the previous start's line (the starts are in order) */
        Py_ssize_t line = bisect_right(&starts, s, at_line, &bad);
        if (bad || line < 1) goto fallback;
        at_line = line - 1;
        if (k == 0 || line != prev_line) touched++;
        prev_line = line;
        prev_start = s;
        int newline = 0;
        if (ascii) changed += e - s;
        if (render || !ascii) {
            for (Py_ssize_t i = (Py_ssize_t)s; i < (Py_ssize_t)e; i++) {
                Py_UCS4 c = PyUnicode_READ(kind, data, i);
                if (c == '\n') newline = 1;
                if (ascii) {
                    if (newline) break;
                } else if (c < 0x80) {
                    changed += 1;
                } else if (c < 0x800) {
                    changed += 2;
                } else if (c >= 0xd800 && c <= 0xdfff) {
                    if (c < 0xdc80 || c > 0xdcff) goto fallback;  /* Python's encode raises: its path says so */
                    changed += 1;
                } else {
                    changed += c < 0x10000 ? 3 : 4;
                }
            }
        }
        if (!render) continue;
        long long col = s - ints_get(&starts, line - 1, &bad) + 1, end_line = line, end_col = col + e - s;
        if (newline) {  /* an end on a later line */
            Py_ssize_t l2 = bisect_right(&starts, e, line - 1, &bad);
            end_line = l2;
            end_col = e - ints_get(&starts, l2 - 1, &bad) + 1;
        }
        if (bad) goto fallback;
        if ((k && OUT_LIT(&o, ",") < 0) || OUT_LIT(&o, "{\"start\":[") < 0 || out_int(&o, line) < 0
            || OUT_LIT(&o, ",") < 0 || out_int(&o, col) < 0 || OUT_LIT(&o, "],\"end\":[") < 0
            || out_int(&o, end_line) < 0 || OUT_LIT(&o, ",") < 0 || out_int(&o, end_col) < 0
            || OUT_LIT(&o, "],\"old\":") < 0 || out_quoted(&o, text, (Py_ssize_t)s, (Py_ssize_t)e) < 0
            || OUT_LIT(&o, ",") < 0 || out_ascii(&o, PyTuple_GET_ITEM(infos[f], 5)) < 0)
            goto done;
    }
    if (bad) goto fallback;
    if (render) {
        if (OUT_LIT(&o, "]") < 0 || !(json = out_str(&o))) goto done;
    } else {
        json = Py_NewRef(Py_None);
    }
    result = tally(infos, count, nfields, json, touched, changed);
    goto done;
fallback:
    if (PyErr_Occurred()) goto done;
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(json);
    if (infos)
        for (Py_ssize_t i = 0; i < nfields; i++) Py_XDECREF(infos[i]);
    PyMem_Free(infos);
    PyMem_Free(count);
    PyMem_Free(o.buf);
    ints_close(&starts);
    ints_close(&rows);
    return result;
}

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

static PyObject *entry(PyObject *self, PyObject *args) {
    PyObject *keys, *values, *raw, *shape_obj = Py_None;
    Py_ssize_t raw_at;
    Shape shape = {NULL, NULL, NULL, NULL, 0, {0}};
    if (!PyArg_ParseTuple(args, "O!OnO|O:entry", &PyTuple_Type, &keys, &values, &raw_at, &raw, &shape_obj))
        return NULL;
    if (!PyList_CheckExact(values) && !PyTuple_CheckExact(values)) Py_RETURN_NONE;
    if (shape_obj != Py_None) {
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

static PyObject *add_counts(PyObject *self, PyObject *args) {
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

/* one file's part of sums(); 0, 1 (a dict attribute that is not an exact dict) or -1 (an error) */
static int sum_file(PyObject *f, PyObject *int_names, PyObject *dict_names, PyObject *status,
                    PyObject *ints, PyObject *dicts, PyObject **refs, PyObject *severities, PyObject *ids,
                    PyObject *zero, PyObject **names) {
    Py_ssize_t ni = PyTuple_GET_SIZE(int_names), nd = PyTuple_GET_SIZE(dict_names);
    if (count_attr(status, f, names[0]) < 0) return -1;
    for (Py_ssize_t k = 0; k < ni; k++) {
        PyObject *v = PyObject_GetAttr(f, PyTuple_GET_ITEM(int_names, k));
        if (!v) return -1;
        PyObject *s = PyNumber_Add(PyList_GET_ITEM(ints, k), v);
        Py_DECREF(v);
        if (!s) return -1;
        PyList_SetItem(ints, k, s);  /* steals s, drops the old sum */
    }
    for (Py_ssize_t k = 0; k < nd; k++) {
        PyObject *d = PyObject_GetAttr(f, PyTuple_GET_ITEM(dict_names, k));
        if (!d) return -1;
        int r = PyDict_CheckExact(d) ? add_dict(PyList_GET_ITEM(dicts, k), d, zero) : 1;
        Py_DECREF(d);
        if (r) return r;
    }
    PyObject *references = PyObject_GetAttr(f, names[1]);
    if (!references) return -1;
    int r = add_item(&refs[0], references, names[3]) < 0 || add_item(&refs[1], references, names[4]) < 0 ? -1 : 0;
    Py_DECREF(references);
    if (r < 0) return -1;
    PyObject *diagnostics = PyObject_GetAttr(f, names[2]);
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

static PyObject *sums(PyObject *self, PyObject *args) {
    PyObject *files, *int_names, *dict_names;
    if (!PyArg_ParseTuple(args, "O!O!O!:sums", &PyList_Type, &files, &PyTuple_Type, &int_names,
                          &PyTuple_Type, &dict_names)) return NULL;
    static const char *attrs[] = {"status", "references", "diagnostics", "converted", "unconverted",
                                  "severity", "id"};
    PyObject *names[7] = {NULL};
    PyObject *zero = PyLong_FromLong(0), *status = PyDict_New(), *severities = PyDict_New(), *ids = PyDict_New();
    Py_ssize_t ni = PyTuple_GET_SIZE(int_names), nd = PyTuple_GET_SIZE(dict_names);
    PyObject *ints = PyList_New(ni), *dicts = PyList_New(nd), *refs[2] = {NULL, NULL}, *result = NULL;
    if (!zero || !status || !severities || !ids || !ints || !dicts) goto done;
    for (int k = 0; k < 7; k++)
        if (!(names[k] = PyUnicode_InternFromString(attrs[k]))) goto done;
    for (Py_ssize_t k = 0; k < ni; k++) PyList_SET_ITEM(ints, k, Py_NewRef(zero));
    for (Py_ssize_t k = 0; k < nd; k++)
        if (!(PyList_SET_ITEM(dicts, k, PyDict_New()), PyList_GET_ITEM(dicts, k))) goto done;
    refs[0] = Py_NewRef(zero);
    refs[1] = Py_NewRef(zero);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(files); i++) {
        PyObject *f = Py_NewRef(PyList_GET_ITEM(files, i));
        int r = sum_file(f, int_names, dict_names, status, ints, dicts, refs, severities, ids, zero, names);
        Py_DECREF(f);
        if (r < 0) goto done;
        if (r > 0) {  /* not what this was written for: the caller's Python path counts */
            result = Py_NewRef(Py_None);
            goto done;
        }
    }
    result = Py_BuildValue("(OOOOOOO)", status, ints, dicts, refs[0], refs[1], severities, ids);
done:
    for (int k = 0; k < 7; k++) Py_XDECREF(names[k]);
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

static PyMethodDef methods[] = {
    {"record", record, METH_VARARGS,
     "record(text, rows, starts, fields, memo, render, ascii) -> (json, lines, bytes, by_library, by_kind, "
     "renamed, includes, shims, inferred, converted) | None"},
    {"entry", entry, METH_VARARGS, "entry(keys, values, raw_at, raw, shape=None) -> str | None: a record entry's JSON"},
    {"add_counts", add_counts, METH_VARARGS, "add_counts(total, counts) -> bool: the dicts of counts summed into total"},
    {"sums", sums, METH_VARARGS,
     "sums(files, int_names, dict_names) -> (status, ints, dicts, converted, unconverted, severities, ids) | None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_crecord", NULL, -1, methods};

PyMODINIT_FUNC PyInit__crecord(void) { return PyModule_Create(&module); }
