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
 * a search each, five a function body; most files and bodies hold none of them. */
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
