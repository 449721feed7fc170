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
 *         inferred, converted, line_count) | None
 *   rows: an `EditList`'s array (start, end, index into `fields` per row); starts: a `LineIndex`'s
 *   line starts (a list of ints or an array of 8-byte ints); memo[fields[i]]: what an edit with
 *   those fields adds, (library, kind, category, the name it counts as converted or None,
 *   inferred, the JSON after its "old") (runner._count_fields). The JSON (when `render`) is what
 *   packed_edits.PackedEdits renders; lines_touched counts the changes of start line from edit to
 *   edit (plus one); bytes_changed sums (end - start) when `ascii` (a character is a byte), else
 *   the UTF-8 length of each replaced text (a lone surrogate from surrogateescape is one byte);
 *   the rest is what runner._tally sums, its dicts in key order; line_count is the file's
 *   `LineIndex.line_count` (the table's length, or the newlines plus one, counted on to the end
 *   of the text by the walk that found the edits' lines). None unless every span lies in the text
 *   in start order and every field tuple used is in the memo.
 * entry(keys, values, raw_at, raw, shape=None) -> str | None: "{" key0 value0 "," key1 value1 ... "}"
 *   with each value as json.dumps(value, separators=(",", ":")) writes it, and `raw` (ASCII JSON
 *   text) written as it is for value `raw_at` when it is not None. `shape` = (class, key texts,
 *   attribute names, alternatives): an item of a list of the entry's that is exactly of that class
 *   is written as the object {key: getattr(item, attribute) or getattr(item, alternative)}
 *   (alternative None: the attribute as it is), as the class's `to_json` would make it (an
 *   attribute that is an object slot of the class, read from the slot itself: 11,650 diagnostics
 *   on the CUDA toolkit's headers, 13 attributes each). None for a
 *   value of any type but exact str, int, float, bool, None, list, tuple or dict with str keys.
 * entries(files, start, limit, deterministic, layout) -> (bytes, next): the record's entries of
 *   files[start:next] as records.iter_entries writes them (each after ",\n    ", the first file's
 *   after "    "), rendered as FileResult.entry_json would render each, until `limit` bytes are
 *   written; `next` is the first file it leaves to Python (another class, a field not stored, a
 *   value entry() leaves, edits whose text is not ASCII JSON at hand). `layout` = (FileResult,
 *   PackedEdits, field names, key texts, the edits' place, the seconds' place, the diagnostics'
 *   shape, round, "text", "_json"): the seconds rounded to six places in C where that is exact.
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
 *   dict (or its `references`) is not an exact dict, or a count not an int within a long long.
 * line_count(text) -> int: text.count("\n") + 1 (a file's `lines_total` where its line starts
 *   were never made: most files of a big tree), sixteen characters compared at once.
 * sorted_counts(d) -> dict: dict(sorted(d.items())) of a dict (runner._sorted: a file's facts
 *   and unconverted names in key order).
 *
 * The module is four files: this one (record() and the method table), _crecord_entry.c,
 * _crecord_totals.c, and _crecord_out.c (the output buffer and JSON strings: _crecord.h). */
#include "_crecord.h"

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

/* the categories "reference" and "include", interned: an edit's category (a literal in the passes,
 * interned too) is most often one of them by address */
static PyObject *S_REFERENCE, *S_INCLUDE;

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

static int key_order(const void *a, const void *b) {
    return str_order(((const KeyCount *)a)->key, ((const KeyCount *)b)->key);
}

/* dict(sorted(sums.items())) of the pairs, every key an exact str and no two equal (summed_dicts
 * adds equal keys' counts together as it meets them), compared by code points as `sorted`
 * compares them. A dict per count, bumped tuple by tuple and then sorted into a second dict, was
 * half of `record` on a small file. */
static PyObject *summed_dict(KeyCount *pairs, Py_ssize_t n) {
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
    PyObject *out = n > 5 ? _PyDict_NewPresized(n) : PyDict_New();  /* (room for them all at once) */
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyLong_FromSsize_t(pairs[i].count);
        int r = v ? PyDict_SetItem(out, pairs[i].key, v) : -1;
        Py_XDECREF(v);
        if (r < 0) {
            Py_DECREF(out);
            return NULL;
        }
    }
    return out;
}

/* two exact str equal: the same object, or the same length, width and characters */
static inline int same_str(PyObject *a, PyObject *b) {
    if (a == b) return 1;
    Py_ssize_t n = PyUnicode_GET_LENGTH(a);
    int kind = PyUnicode_KIND(a);
    return n == PyUnicode_GET_LENGTH(b) && kind == PyUnicode_KIND(b)
           && memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)n * (size_t)kind) == 0;
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
            KeyCount *part = pairs + k * nfields;
            Py_ssize_t j = 0;  /* an equal key met before (most files name a library or two): its count */
            while (j < n[k] && !same_str(part[j].key, key)) j++;
            if (j < n[k]) part[j].count += count[i];
            else part[n[k]++] = (KeyCount){key, count[i]};
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
                       long long touched, long long changed, Py_ssize_t lines) {
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
        if (category == S_REFERENCE) {
            /* (most edits: neither, known by the interned string's address) */
        } else if (category == S_INCLUDE) {
            includes += count[i];
        } else if (PyUnicode_Check(category)) {
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
    /* the tuple Py_BuildValue("(OLLOOOnnnnn)", ...) made, built directly (its format read for every file) */
    PyObject *items[11] = {Py_NewRef(json), PyLong_FromLongLong(touched), PyLong_FromLongLong(changed),
                           Py_NewRef(sorted[0]), Py_NewRef(sorted[1]), Py_NewRef(sorted[2]),
                           PyLong_FromSsize_t(includes), PyLong_FromSsize_t(shims), PyLong_FromSsize_t(inferred),
                           PyLong_FromSsize_t(converted), PyLong_FromSsize_t(lines)};
    result = PyTuple_New(11);
    for (int k = 0; k < 11; k++) {
        if (!result || !items[k]) {
            Py_XDECREF(items[k]);
            continue;
        }
        PyTuple_SET_ITEM(result, k, items[k]);
    }
    for (int k = 0; k < 11 && result; k++)
        if (!items[k]) Py_CLEAR(result);
done:
    for (int k = 0; k < 3; k++) {
        Py_XDECREF(by[k]);
        Py_XDECREF(sorted[k]);
    }
    return result;
}

/* the newlines in [from, to) of the text; *last: the offset of the last one (left as it was without
 * one). A one-byte text's counted sixteen bytes at once and its last found from the end: one
 * memchr call per newline was a fifth of record() on a tree of small files */
static Py_ssize_t newlines(int kind, const void *data, Py_ssize_t from, Py_ssize_t to, Py_ssize_t *last) {
    Py_ssize_t count = 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        const unsigned char *base = data;
        if (to <= from || !(count = crecord_newlines_1(base + from, to - from))) return count;
#if defined(__GLIBC__)
        *last = (const unsigned char *)memrchr(base + from, '\n', (size_t)(to - from)) - base;
#else
        Py_ssize_t i = to - 1;
        while (base[i] != '\n') i--;
        *last = i;
#endif
        return count;
    }
    for (Py_ssize_t i = from; i < to; i++)
        if (PyUnicode_READ(kind, data, i) == '\n') {
            count++;
            *last = i;
        }
    return count;
}

/* memo[key], borrowed. A tuple's hash is made again at each look-up (six fields hashed, a third
 * of the look-ups' cost, which were a tenth of record()); most of a run's field tuples are the
 * same objects file after file (the identifier pass's table of plain renames), so the answers
 * are remembered by the tuple's address (the tuple held, so the address stays its own), for as
 * long as the memo is the same dict unchanged: any change to it (its version tag, which a new
 * dict never shares with an old one) forgets them all. */
#if PY_VERSION_HEX < 0x030C0000
#define MEMO_CACHE 512
static struct {
    PyObject *key, *info;
} memo_cache[MEMO_CACHE];
static PyObject *memo_of;  /* the memo the answers are from (its address only) */
static uint64_t memo_version;

static PyObject *memo_get(PyObject *memo, PyObject *key) {
    uint64_t version = ((PyDictObject *)memo)->ma_version_tag;
    if (memo != memo_of || version != memo_version) {
        for (int i = 0; i < MEMO_CACHE; i++) {
            Py_CLEAR(memo_cache[i].key);
            Py_CLEAR(memo_cache[i].info);
        }
        memo_of = memo;
        memo_version = version;
    }
    size_t h = ((uintptr_t)key >> 4) % MEMO_CACHE;
    if (memo_cache[h].key == key) return memo_cache[h].info;
    PyObject *info = PyDict_GetItemWithError(memo, key);
    if (info) {
        Py_XSETREF(memo_cache[h].key, Py_NewRef(key));
        Py_XSETREF(memo_cache[h].info, Py_NewRef(info));
    }
    return info;
}
#else
static PyObject *memo_get(PyObject *memo, PyObject *key) { return PyDict_GetItemWithError(memo, key); }
#endif

#define FEW_FIELDS 32  /* field tuples a file's counts are kept on the stack for */

/* record(text, rows, starts, ...): `starts` is the file's line table (a list or an array), or
 * None: then each edit's line is found by counting the newlines since the one before (the edits
 * are in order; the table costs an int object a line, for a file that needs it for nothing else) */
static PyObject *record(PyObject *self, PyObject *args) {
    PyObject *text, *rows_obj, *starts_obj, *fields, *memo;
    int render, ascii;
    PyObject *const *a = ((PyTupleObject *)args)->ob_item;
    if (PyTuple_GET_SIZE(args) == 7 && PyUnicode_CheckExact(a[0]) && PyList_CheckExact(a[3]) && PyDict_CheckExact(a[4])
        && PyBool_Check(a[5]) && PyBool_Check(a[6])) {  /* as the runner passes them: read without the format */
        text = a[0], rows_obj = a[1], starts_obj = a[2], fields = a[3], memo = a[4];
        render = a[5] == Py_True, ascii = a[6] == Py_True;
    } else if (!PyArg_ParseTuple(args, "UOOO!O!pp:record", &text, &rows_obj, &starts_obj, &PyList_Type, &fields,
                                 &PyDict_Type, &memo, &render, &ascii)) {
        return NULL;
    }
    Ints rows, starts = {0};
    if (!ints_open(rows_obj, &rows) || rows.list) {
        ints_close(&rows);
        Py_RETURN_NONE;
    }
    int walk = starts_obj == Py_None;  /* no line table: the newlines counted from one edit to the next */
    if (!walk && !ints_open(starts_obj, &starts)) {
        ints_close(&starts);
        ints_close(&rows);
        Py_RETURN_NONE;
    }
    PyObject *result = NULL, *json = NULL, **infos = NULL, *few_infos[FEW_FIELDS];
    Py_ssize_t *count = NULL, nfields = PyList_GET_SIZE(fields), few_count[FEW_FIELDS];
    Out o = {NULL, 0, 0, NULL};
    int bad = 0;
    Py_ssize_t n = rows.n / 3, len = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (rows.n % 3 || (!walk && starts.n == 0)) goto fallback;
    if (nfields <= FEW_FIELDS) {  /* most files: a few field tuples, counted on the stack */
        memset(few_count, 0, (size_t)nfields * sizeof *few_count);
        memset(few_infos, 0, (size_t)nfields * sizeof *few_infos);
        count = few_count;
        infos = few_infos;
    } else {
        count = PyMem_Calloc((size_t)nfields, sizeof(Py_ssize_t));
        infos = PyMem_Calloc((size_t)nfields, sizeof(PyObject *));
    }
    if (!count || !infos) {
        PyErr_NoMemory();
        goto done;
    }
    if (render && (out_grow(&o, 160 * n + 2) < 0 || OUT_LIT(&o, "[") < 0)) goto done;  /* room for most lists at once */
    long long prev_start = -1, touched = 0, changed = 0;
    Py_ssize_t at_line = 0, prev_line = 0, at = 0, walked = 1, nl = -1;  /* (walk: lines before `at`, the last '\n') */
    for (Py_ssize_t k = 0; k < n; k++) {
        long long s = ints_get(&rows, 3 * k, &bad), e = ints_get(&rows, 3 * k + 1, &bad);
        long long f = ints_get(&rows, 3 * k + 2, &bad);
        if (s < prev_start || s < 0 || e < s || e > len || f < 0 || f >= nfields) goto fallback;
        if (!count[f]++) {  /* the first edit with these fields: what they add, from the memo */
            PyObject *info = memo_get(memo, PyList_GET_ITEM(fields, (Py_ssize_t)f));
            if (!info) goto fallback;  /* not counted yet (or an error): the caller's path */
            if (!PyTuple_CheckExact(info) || PyTuple_GET_SIZE(info) != 6) goto fallback;
            PyObject *tail = PyTuple_GET_ITEM(info, 5);
            if (!PyUnicode_CheckExact(tail) || !PyUnicode_IS_ASCII(tail)) goto fallback;
            infos[f] = Py_NewRef(info);
        }
        /* the start's line: from the previous start's line (the starts are in order) */
        Py_ssize_t line;
        if (walk) {
            walked += newlines(kind, data, at, (Py_ssize_t)s, &nl);
            at = (Py_ssize_t)s;
            line = walked;
        } else {
            line = bisect_right(&starts, s, at_line, &bad);
            if (bad || line < 1) goto fallback;
            at_line = line - 1;
        }
        if (k == 0 || line != prev_line) touched++;
        prev_line = line;
        prev_start = s;
        int newline = 0;
        if (ascii) changed += e - s;
        if (render && ascii && kind == PyUnicode_1BYTE_KIND) {  /* only whether it holds a newline: one memchr */
            newline = memchr((const char *)data + s, '\n', (size_t)(e - s)) != NULL;
        } else if (render || !ascii) {
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
        long long col = walk ? s - nl : s - ints_get(&starts, line - 1, &bad) + 1, end_line = line, end_col = col + e - s;
        if (newline && walk) {  /* an end on a later line: the newlines inside the edit counted */
            Py_ssize_t last = nl;
            end_line = line + newlines(kind, data, (Py_ssize_t)s, (Py_ssize_t)e, &last);
            end_col = e - last;
        } else if (newline) {
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
    /* the file's line count: the table's length, or the newlines after the last edit counted too */
    Py_ssize_t lines = walk ? walked + newlines(kind, data, at, len, &nl) : starts.n;
    result = tally(infos, count, nfields, json, touched, changed, lines);
    goto done;
fallback:
    if (PyErr_Occurred()) goto done;
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(json);
    if (infos)
        for (Py_ssize_t i = 0; i < nfields; i++) Py_XDECREF(infos[i]);
    if (infos != few_infos) PyMem_Free(infos);
    if (count != few_count) PyMem_Free(count);
    PyMem_Free(o.buf);
    ints_close(&starts);
    ints_close(&rows);
    return result;
}

static PyMethodDef methods[] = {
    {"record", record, METH_VARARGS,
     "record(text, rows, starts, fields, memo, render, ascii) -> (json, lines, bytes, by_library, by_kind, "
     "renamed, includes, shims, inferred, converted, line_count) | None"},
    {"entry", crecord_entry, METH_VARARGS, "entry(keys, values, raw_at, raw, shape=None) -> str | None: a record entry's JSON"},
    {"entries", crecord_entries, METH_VARARGS,
     "entries(files, start, limit, deterministic, layout) -> (bytes, next): the record's entries from `start` on"},
    {"add_counts", crecord_add_counts, METH_VARARGS, "add_counts(total, counts) -> bool: the dicts of counts summed into total"},
    {"sums", crecord_sums, METH_VARARGS,
     "sums(files, int_names, dict_names) -> (status, ints, dicts, converted, unconverted, severities, ids) | None"},
    {"line_count", crecord_line_count, METH_O, "line_count(text) -> int: text.count('\\n') + 1, a file's lines_total"},
    {"sorted_counts", crecord_sorted_counts, METH_O, "sorted_counts(d) -> dict: dict(sorted(d.items()))"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_crecord", NULL, -1, methods};

PyMODINIT_FUNC PyInit__crecord(void) {
    S_REFERENCE = PyUnicode_InternFromString("reference");
    S_INCLUDE = PyUnicode_InternFromString("include");
    if (!S_REFERENCE || !S_INCLUDE) return NULL;
    return PyModule_Create(&module);
}
