/* The warp-size pass's text triggers in one pass over the text (musify/passes/hazards/
 * warp_precheck.py `marks_python` is the reference: the `TRIGGER` and `SIXTEEN` regexes); part of
 * the `_claunch` extension. tests/test_prefilters.py proves both give the same answers on
 * generated inputs.
 *
 * warp_marks(text, start, end) -> int: 1 when `TRIGGER` matches in text[start:end]: an integer
 * literal as the checks read one (`int_value`: `0[xX]` and hex digits or decimal digits, leading
 * zeros, `[uUlL]*`; no word character or '.' on either side) whose value is 31, 32 or 0xFFFFFFFF,
 * or 5 after `>>`; a `~\s*0`; a decimal digit beyond ASCII (which `int_value` reads too); else 2
 * when such a literal of 16 (`SIXTEEN`) is there; else 0. As `re.search(text, start, end)` reads
 * it: look-aheads see nothing at or past `end`, the look-behinds look before `start` too. The
 * regexes took a Python call and a search each, several a function body; most files and bodies
 * hold none of them.
 *
 * warp_bodies(text, rows, shuffles, results) -> [k]: that test asked of every device function of
 * a file in one call (`warp_precheck.bodies_python` is the reference, in the same test file).
 *
 * warp_loops(text, start, end) -> [offset]: where in text[start:end] a `for` loop's parentheses
 * may hold a 16 or 32 (`warp_macros.loop_offsets_python` is the reference, tests/test_prefilters.py). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define READ(i) PyUnicode_READ(kind, data, (i))

/* `\w` of a str pattern, and `[\w.]` */
static inline int word_char(Py_UCS4 c) { return c == '_' || Py_UNICODE_ISALNUM(c); }
static inline int word_or_dot(Py_UCS4 c) { return c == '.' || word_char(c); }

/* the first offset at or after `i` (below `end`) that is not `\s`, or `end` */
static inline Py_ssize_t skip_space(int kind, const void *data, Py_ssize_t i, Py_ssize_t end) {
    while (i < end && Py_UNICODE_ISSPACE(READ(i))) i++;
    return i;
}

#if defined(__GNUC__)
#define WARP_INLINE inline __attribute__((always_inline))
#else
#define WARP_INLINE inline
#endif

#define FULL_MASK 0xFFFFFFFFULL
#define VALUE_CAP 0x100000000ULL /* every value at or past it is as good as any other: none is looked for */

/* the integer literal starting at `i` (a digit, no word character or '.' before it) as
 * `int_value` reads it, within `end`: its end, and its value in *value (capped at VALUE_CAP); -1
 * where a word character or '.' follows it (no literal the checks read) */
static WARP_INLINE Py_ssize_t literal_end(int kind, const void *data, Py_ssize_t i, Py_ssize_t end,
                                          unsigned long long *value) {
    unsigned long long v = 0;
    Py_UCS4 c;
    if (READ(i) == '0' && i + 2 < end && (READ(i + 1) == 'x' || READ(i + 1) == 'X') && Py_ISXDIGIT(READ(i + 2))) {
        for (i += 2; i < end && (c = READ(i)) < 128 && Py_ISXDIGIT(c); i++) {
            unsigned d = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
            v = v >= VALUE_CAP ? VALUE_CAP : v * 16 + d;
        }
    } else {
        for (; i < end && (c = READ(i)) >= '0' && c <= '9'; i++) v = v >= VALUE_CAP ? VALUE_CAP : v * 10 + (c - '0');
    }
    while (i < end && ((c = READ(i)) == 'u' || c == 'U' || c == 'l' || c == 'L')) i++;
    if (i < end && word_or_dot(READ(i))) return -1;
    *value = v;
    return i;
}

/* `>>\s*` ends just before `i`, wholly at or after `start` */
static WARP_INLINE int after_shift(int kind, const void *data, Py_ssize_t i, Py_ssize_t start) {
    while (i > start && Py_UNICODE_ISSPACE(READ(i - 1))) i--;
    return i - 2 >= start && READ(i - 1) == '>' && READ(i - 2) == '>';
}

/* `warp_marks` for one storage kind (a constant where it is inlined: one loop per kind) */
static WARP_INLINE int marks_kind(int kind, const void *data, Py_ssize_t start, Py_ssize_t end) {
    int sixteen = 0;
    for (Py_ssize_t i = start; i < end; i++) {
        Py_UCS4 c = READ(i);
        if (c == '~') {  /* ~\s*0 */
            Py_ssize_t j = skip_space(kind, data, i + 1, end);
            if (j < end && READ(j) == '0') return 1;
        } else if (c >= '0' && c <= '9') {
            if (i > 0 && word_or_dot(READ(i - 1))) continue;  /* inside a name or a longer number */
            unsigned long long v;
            Py_ssize_t j = literal_end(kind, data, i, end, &v);
            if (j < 0) continue;  /* a float, a name's digits */
            if (v == 31 || v == 32 || v == FULL_MASK || (v == 5 && after_shift(kind, data, i, start))) return 1;
            if (v == 16) sixteen = 1;
            i = j - 1;
        } else if (c >= 128 && Py_UNICODE_ISDECIMAL(c)) {
            return 1;
        }
    }
    return sixteen ? 2 : 0;
}

PyObject *musify_claunch_warp_marks(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "Unn:warp_marks", &text, &start, &end)) return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    /* as `re` clamps pos and endpos */
    if (start < 0) start = 0;
    if (end > n) end = n;
    int found = kind == PyUnicode_1BYTE_KIND   ? marks_kind(PyUnicode_1BYTE_KIND, data, start, end)
                : kind == PyUnicode_2BYTE_KIND ? marks_kind(PyUnicode_2BYTE_KIND, data, start, end)
                                               : marks_kind(PyUnicode_4BYTE_KIND, data, start, end);
    return PyLong_FromLong(found);
}

/* the first of the sorted ints of `offsets` at or after `lo` lies below `hi` (`warp_precheck._any_in`);
 * -1 with an exception */
static int any_in(PyObject *offsets, Py_ssize_t lo, Py_ssize_t hi) {
    Py_ssize_t a = 0, b = PyList_GET_SIZE(offsets);
    while (a < b) {  /* bisect_left */
        Py_ssize_t mid = (a + b) / 2;
        Py_ssize_t v = PyLong_AsSsize_t(PyList_GET_ITEM(offsets, mid));
        if (v == -1 && PyErr_Occurred()) return -1;
        if (v < lo) a = mid + 1;
        else b = mid;
    }
    if (a >= PyList_GET_SIZE(offsets)) return 0;
    Py_ssize_t v = PyLong_AsSsize_t(PyList_GET_ITEM(offsets, a));
    if (v == -1 && PyErr_Occurred()) return -1;
    return v < hi;
}

/* warp_bodies(text, rows, shuffles, results) -> [k]: warp_precheck.bodies_python in C. `rows` the
 * device functions' array (six integers a function, 4 or 8 bytes each: body start and end at 1 and
 * 2), `shuffles` and `results` sorted lists of offsets; the index of each function whose body
 * `warp_size.run` goes on to look at: a trigger in it (`warp_marks` 1), a lane-mask result used in
 * it, or a standalone 16 and a shuffle in it. The pass's loop over its functions, one Python call
 * a function, on every file with a launch. */
PyObject *musify_claunch_warp_bodies(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *rows, *shuffles, *results, *out = NULL;
    if (!PyArg_ParseTuple(args, "UOO!O!:warp_bodies", &text, &rows, &PyList_Type, &shuffles, &PyList_Type, &results))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(rows, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (!view.format || (strcmp(view.format, "i") && strcmp(view.format, "q")) || view.len % (6 * view.itemsize)) {
        PyErr_SetString(PyExc_TypeError, "warp_bodies: rows must be an array of 'i' or 'q', six a function");
        goto done;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), count = view.len / (6 * view.itemsize);
    if (!(out = PyList_New(0))) goto done;
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t start, end;
        if (view.itemsize == 4) {
            start = ((const int *)view.buf)[6 * k + 1];
            end = ((const int *)view.buf)[6 * k + 2];
        } else {
            start = (Py_ssize_t)((const long long *)view.buf)[6 * k + 1];
            end = (Py_ssize_t)((const long long *)view.buf)[6 * k + 2];
        }
        Py_ssize_t lo = start < 0 ? 0 : start, hi = end > n ? n : end;  /* as `warp_marks` clamps them */
        int found = kind == PyUnicode_1BYTE_KIND   ? marks_kind(PyUnicode_1BYTE_KIND, data, lo, hi)
                    : kind == PyUnicode_2BYTE_KIND ? marks_kind(PyUnicode_2BYTE_KIND, data, lo, hi)
                                                   : marks_kind(PyUnicode_4BYTE_KIND, data, lo, hi);
        int pick = found == 1;
        if (!pick && PyList_GET_SIZE(results)) pick = any_in(results, start, end);
        if (!pick && found == 2 && PyList_GET_SIZE(shuffles)) pick = any_in(shuffles, start, end);
        if (pick < 0) goto fail;
        if (pick) {
            PyObject *x = PyLong_FromSsize_t(k);
            if (!x || PyList_Append(out, x) < 0) {
                Py_XDECREF(x);
                goto fail;
            }
            Py_DECREF(x);
        }
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    PyBuffer_Release(&view);
    return out;
}

/* warp_literals(text, low, high, spellings, values) -> [(start, end, value)] or None:
 * warp_tree.literal_tokens_python in C, on ASCII text only (None otherwise: the caller asks the
 * reference). Each occurrence of one of `spellings` (ASCII strs) wholly in text[low:high] is
 * walked back over '0's to the literal's start, kept where no ASCII letter, digit or '_' comes
 * just before, and read from there as `warp_tree._number()` matches (`0[xX]` hex digits or
 * decimal digits, `[uUlL]*`, then no word character or '.'); a literal whose value is one of
 * `values` (ints 0 <= v < 2**63) is returned, each start once, in order. The finds, the set of
 * starts and a regex match and an `int` a start were a fifth of the pass's checks. */
static inline int ascii_word(Py_UCS1 c) {
    return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline int hex_digit(Py_UCS1 c, unsigned *v) {
    if (c >= '0' && c <= '9') *v = c - '0';
    else if (c >= 'a' && c <= 'f') *v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') *v = c - 'A' + 10;
    else return 0;
    return 1;
}

/* the literal at `s` as `_number().match` reads it: its end, and its value in *value (*big when it
 * is past 2**63 - 1); -1 where it does not match */
static Py_ssize_t literal_at(const Py_UCS1 *t, Py_ssize_t n, Py_ssize_t s, unsigned long long *value, int *big) {
    Py_ssize_t i = s;
    unsigned long long v = 0;
    unsigned d;
    *big = 0;
    if (i + 2 < n && t[i] == '0' && (t[i + 1] == 'x' || t[i + 1] == 'X') && hex_digit(t[i + 2], &d)) {
        for (i += 2; i < n && hex_digit(t[i], &d); i++) {
            if (*big || v > (0x7fffffffffffffffULL - d) / 16) *big = 1;
            else v = v * 16 + d;
        }
    } else if (i < n && t[i] >= '0' && t[i] <= '9') {
        for (; i < n && t[i] >= '0' && t[i] <= '9'; i++) {
            d = t[i] - '0';
            if (*big || v > (0x7fffffffffffffffULL - d) / 10) *big = 1;
            else v = v * 10 + d;
        }
    } else {
        return -1;
    }
    while (i < n && (t[i] == 'u' || t[i] == 'U' || t[i] == 'l' || t[i] == 'L')) i++;
    if (i < n && (t[i] == '.' || ascii_word(t[i]))) return -1;
    *value = v;
    return i;
}

static int cmp_ssize(const void *a, const void *b) {
    Py_ssize_t x = *(const Py_ssize_t *)a, y = *(const Py_ssize_t *)b;
    return (x > y) - (x < y);
}

PyObject *musify_claunch_warp_literals(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *spellings, *values, *out = NULL;
    Py_ssize_t low, high;
    if (!PyArg_ParseTuple(args, "UnnO!O!:warp_literals", &text, &low, &high, &PyTuple_Type, &spellings,
                          &PyTuple_Type, &values))
        return NULL;
    if (!PyUnicode_IS_ASCII(text)) Py_RETURN_NONE;
    const Py_UCS1 *t = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), nvalues = PyTuple_GET_SIZE(values);
    unsigned long long wanted[16];
    if (nvalues > 16) Py_RETURN_NONE;
    for (Py_ssize_t k = 0; k < nvalues; k++) {
        unsigned long long v = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(values, k));
        if (PyErr_Occurred() || v > 0x7fffffffffffffffULL) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        wanted[k] = v;
    }
    if (low < 0) low = 0;  /* as `str.find` clamps them */
    if (high > n) high = n;
    Py_ssize_t cap = 16, count = 0, *starts = PyMem_Malloc(cap * sizeof(Py_ssize_t));
    if (!starts) return PyErr_NoMemory();
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(spellings); k++) {
        PyObject *word = PyTuple_GET_ITEM(spellings, k);
        if (!PyUnicode_Check(word) || !PyUnicode_IS_ASCII(word) || PyUnicode_GET_LENGTH(word) == 0) {
            PyMem_Free(starts);
            Py_RETURN_NONE;
        }
        const Py_UCS1 *w = PyUnicode_1BYTE_DATA(word);
        Py_ssize_t m = PyUnicode_GET_LENGTH(word);
        for (Py_ssize_t at = low; at + m <= high; at++) {
            if (t[at] != w[0] || memcmp(t + at, w, m)) continue;
            Py_ssize_t s = at;
            while (s && t[s - 1] == '0') s--;
            if (s && ascii_word(t[s - 1])) continue;  /* a name's digits */
            if (count == cap) {
                Py_ssize_t *more = PyMem_Realloc(starts, 2 * cap * sizeof(Py_ssize_t));
                if (!more) {
                    PyMem_Free(starts);
                    return PyErr_NoMemory();
                }
                starts = more;
                cap *= 2;
            }
            starts[count++] = s;
        }
    }
    qsort(starts, count, sizeof(Py_ssize_t), cmp_ssize);
    if (!(out = PyList_New(0))) goto done;
    for (Py_ssize_t k = 0; k < count; k++) {
        if (k && starts[k] == starts[k - 1]) continue;
        unsigned long long v;
        int big;
        Py_ssize_t end = literal_at(t, n, starts[k], &v, &big);
        if (end < 0 || big) continue;
        int hit = 0;
        for (Py_ssize_t j = 0; j < nvalues && !hit; j++) hit = wanted[j] == v;
        if (!hit) continue;
        PyObject *row = Py_BuildValue("(nnK)", starts[k], end, v);
        if (!row || PyList_Append(out, row) < 0) {
            Py_XDECREF(row);
            Py_CLEAR(out);
            goto done;
        }
        Py_DECREF(row);
    }
done:
    PyMem_Free(starts);
    return out;
}

/* warp_loops(text, start, end) -> [offset]: the offset of each `for` in text[start:end] (no word
 * character or '$' on either side) that `\s*(` follows and whose parentheses, to the `)` that
 * closes them (counted naively, before `end`), hold what `warp_marks` finds (1 or 2); or in which
 * a quote, a comment's opening or a '#' stands before that `)` (a literal, a comment or a directive: the naive
 * count may be wrong there, so the offset is kept). The warp-size pass asks it of every file
 * before it looks for offset loops that call a shuffle through a macro (musify/passes/hazards/
 * warp_macros.py): most files have none. */
static int loops_kind(int kind, const void *data, Py_ssize_t start, Py_ssize_t end, PyObject *out) {
    for (Py_ssize_t i = start; i + 3 <= end; i++) {
        if (kind == PyUnicode_1BYTE_KIND) {  /* the next 'f' found by memchr (vectorised; glibc's memmem is not) */
            const char *base = (const char *)data, *hit = memchr(base + i, 'f', (size_t)(end - 2 - i));
            if (!hit) break;
            i = hit - base;
        }
        if (READ(i) != 'f' || READ(i + 1) != 'o' || READ(i + 2) != 'r') continue;
        if (i > 0 && (word_char(READ(i - 1)) || READ(i - 1) == '$')) continue;
        if (i + 3 < end && (word_char(READ(i + 3)) || READ(i + 3) == '$')) continue;
        Py_ssize_t open = skip_space(kind, data, i + 3, end);
        if (open >= end || READ(open) != '(') continue;
        int depth = 0, unsure = 0;
        Py_ssize_t close = -1;
        for (Py_ssize_t j = open; j < end; j++) {
            Py_UCS4 c = READ(j);
            if (c == '(') depth++;
            else if (c == ')' && --depth == 0) { close = j; break; }
            else if (c == '"' || c == '\'' || c == '#' || (c == '/' && j + 1 < end && (READ(j + 1) == '/' || READ(j + 1) == '*')))
                unsure = 1;
        }
        if (close < 0) continue;
        if (unsure || marks_kind(kind, data, open, close)) {
            PyObject *x = PyLong_FromSsize_t(i);
            if (!x || PyList_Append(out, x) < 0) {
                Py_XDECREF(x);
                return -1;
            }
            Py_DECREF(x);
        }
        i += 2;
    }
    return 0;
}

PyObject *musify_claunch_warp_loops(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "Unn:warp_loops", &text, &start, &end)) return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (start < 0) start = 0;
    if (end > n) end = n;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    int failed = kind == PyUnicode_1BYTE_KIND   ? loops_kind(PyUnicode_1BYTE_KIND, data, start, end, out)
                 : kind == PyUnicode_2BYTE_KIND ? loops_kind(PyUnicode_2BYTE_KIND, data, start, end, out)
                                                : loops_kind(PyUnicode_4BYTE_KIND, data, start, end, out);
    if (failed) Py_CLEAR(out);
    return out;
}
