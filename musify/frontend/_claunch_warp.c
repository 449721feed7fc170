/* The warp-size pass's text triggers in one pass over the text (musify/passes/hazards/
 * warp_precheck.py `marks_python` is the reference: `has_trigger`, then `standalone` for a 16);
 * part of the `_claunch` extension. tests/test_prefilters.py proves both give the same answers
 * on generated inputs.
 *
 * warp_marks(text, start, end) -> int: 1 when `TRIGGER` (a full 32-bit mask `0[xX][fF]{8}`, a
 * `~\s*0`, a standalone 31 or 32, a `>>\s*5` not followed by a word character) matches in
 * text[start:end]; else 2 when a standalone 16 does; else 0. As `re.search(text, start, end)`
 * reads it: look-aheads see nothing at or past `end`, the look-behind of "standalone" (no word
 * character and no '.' just before) looks before `start` too. The regexes took a Python call and
 * a search each, five a function body; most files and bodies hold none of them.
 *
 * warp_bodies(text, rows, shuffles, results) -> [k]: that test asked of every device function of
 * a file in one call (`warp_precheck.bodies_python` is the reference, in the same test file). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define READ(i) PyUnicode_READ(kind, data, (i))

/* `\w` of a str pattern, and `[\w.]` */
static inline int word_char(Py_UCS4 c) { return c == '_' || Py_UNICODE_ISALNUM(c); }
static inline int word_or_dot(Py_UCS4 c) { return c == '.' || word_char(c); }

/* the first offset at or after `i` (below `end`) that is not `\s`, or `end` */
static inline Py_ssize_t skip_space(int kind, const void *data, Py_ssize_t i, Py_ssize_t end) {
    while (i < end && Py_UNICODE_ISSPACE(READ(i))) i++;
    return i;
}

/* the two digits at `i` stand alone: no word character or '.' before (anywhere in the text)
 * or after (before `end`) */
static inline int standalone_pair(int kind, const void *data, Py_ssize_t i, Py_ssize_t end) {
    return (i == 0 || !word_or_dot(READ(i - 1))) && (i + 2 >= end || !word_or_dot(READ(i + 2)));
}

#if defined(__GNUC__)
#define WARP_INLINE inline __attribute__((always_inline))
#else
#define WARP_INLINE inline
#endif

/* the characters a trigger starts with: every other one is passed over with one table read */
static const unsigned char STARTS[128] = {['0'] = 1, ['1'] = 1, ['3'] = 1, ['>'] = 1, ['~'] = 1};

/* `warp_marks` for one storage kind (a constant where it is inlined: one loop per kind) */
static WARP_INLINE int marks_kind(int kind, const void *data, Py_ssize_t start, Py_ssize_t end) {
    int sixteen = 0;
    for (Py_ssize_t i = start; i < end; i++) {
        Py_UCS4 c = READ(i);
        if (c >= 128 || !STARTS[c]) continue;
        switch (c) {
        case '0':  /* 0[xX][fF]{8} */
            if (i + 10 <= end && (READ(i + 1) == 'x' || READ(i + 1) == 'X')) {
                Py_ssize_t k = 2;
                while (k < 10 && (READ(i + k) == 'f' || READ(i + k) == 'F')) k++;
                if (k == 10) return 1;
            }
            break;
        case '~': {  /* ~\s*0 */
            Py_ssize_t j = skip_space(kind, data, i + 1, end);
            if (j < end && READ(j) == '0') return 1;
            break;
        }
        case '>':  /* >>\s*5(?!\w) */
            if (i + 1 < end && READ(i + 1) == '>') {
                Py_ssize_t j = skip_space(kind, data, i + 2, end);
                if (j < end && READ(j) == '5' && (j + 1 >= end || !word_char(READ(j + 1)))) return 1;
            }
            break;
        case '3':  /* (?<![\w.])3[12](?![\w.]) */
            if (i + 1 < end && (READ(i + 1) == '1' || READ(i + 1) == '2') && standalone_pair(kind, data, i, end))
                return 1;
            break;
        default:  /* '1': (?<![\w.])16(?![\w.]) */
            if (!sixteen && i + 1 < end && READ(i + 1) == '6' && standalone_pair(kind, data, i, end)) sixteen = 1;
            break;
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
