/* What the two halves of the `_cscan` extension share: the text view, the character classes of
 * the Python scanner's regular expressions, and the helpers that build result objects.
 * `_cscan.c` is the scanner (its two passes in `_cscan_lex.h` and `_cscan_label.h`, parts of its
 * translation unit) and the module; `_cscan_ident.c` the identifier pass's helpers; `_cscan_lines.c`
 * the line table. */
#ifndef MUSIFY_CSCAN_H
#define MUSIFY_CSCAN_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t n;
    PyObject *text;
} Text;

#define CH(t, i) PyUnicode_READ((t)->kind, (t)->data, (i))
/* The scanning functions are inlined into one copy per string kind (`scan_kind`), so that
 * `CH` compiles to a plain array read in each. */
#define ALWAYS_INLINE inline __attribute__((always_inline))

static const unsigned char ASCII_WORD[128] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1,
    ['9'] = 1, ['_'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1,
    ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
    ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1,
    ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
    ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1,
};

/* the scanner's `_WORD_CHARS`: ASCII only */
static inline int ascii_word(Py_UCS4 c) { return c < 128 && ASCII_WORD[c]; }
/* the regex `\w` on str patterns */
static inline int re_word(Py_UCS4 c) { return c < 128 ? ASCII_WORD[c] : (int)Py_UNICODE_ISALNUM(c); }
/* the regex `[A-Za-z_]` */
static inline int ident_start(Py_UCS4 c) { return c < 128 && ASCII_WORD[c] && !(c >= '0' && c <= '9'); }

static inline int append_steal(PyObject *list, PyObject *item) {
    if (!item) return -1;
    int r = PyList_Append(list, item);
    Py_DECREF(item);
    return r;
}

/* a tuple subclass instance (NamedTuple) from owned references; steals them, also on failure */
static inline PyObject *make_tuple(PyObject *type, PyObject **items, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!items[i]) {
            for (Py_ssize_t j = 0; j < n; j++) Py_XDECREF(items[j]);
            return NULL;
        }
    }
    PyObject *o = type ? ((PyTypeObject *)type)->tp_alloc((PyTypeObject *)type, n) : PyTuple_New(n);
    if (!o) {
        for (Py_ssize_t j = 0; j < n; j++) Py_DECREF(items[j]);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) PyTuple_SET_ITEM(o, i, items[i]);
    return o;
}

/* Rows of integers as `musify.rows.Rows` keeps them: one flat buffer, 4 bytes a value while every
 * value of the text fits (offsets below 2**31), else 8. */
typedef struct { void *buf; Py_ssize_t n, cap; int itemsize; } Rows;

static inline int rows_itemsize(Py_ssize_t text_len) { return text_len < 0x7fffffff ? 4 : 8; }

static inline int rows_push(Rows *r, const Py_ssize_t *values, Py_ssize_t k) {
    if (r->n + k > r->cap) {
        Py_ssize_t c = r->cap ? r->cap * 2 : 256;
        while (c < r->n + k) c *= 2;
        void *nb = PyMem_Realloc(r->buf, (size_t)c * (size_t)r->itemsize);
        if (!nb) { PyErr_NoMemory(); return -1; }
        r->buf = nb;
        r->cap = c;
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        if (r->itemsize == 4) ((int32_t *)r->buf)[r->n + i] = (int32_t)values[i];
        else ((int64_t *)r->buf)[r->n + i] = (int64_t)values[i];
    }
    r->n += k;
    return 0;
}

static inline Py_ssize_t rows_get(const void *buf, int itemsize, Py_ssize_t i) {
    return itemsize == 4 ? (Py_ssize_t)((const int32_t *)buf)[i] : (Py_ssize_t)((const int64_t *)buf)[i];
}

static inline PyObject *rows_bytes(const Rows *r) {
    return PyBytes_FromStringAndSize(r->buf ? (const char *)r->buf : "", r->n * r->itemsize);
}

static inline void rows_free(Rows *r) { PyMem_Free(r->buf); r->buf = NULL; r->n = r->cap = 0; }

/* the identifier pass's helpers (`_cscan_ident.c`; the line table's, `_cscan_lines.c`) */
PyObject *musify_cscan_renames(PyObject *self, PyObject *args);
/* the bound `Ident` type and `Ctx` members (`_cscan.c`), borrowed */
PyObject *musify_cscan_ident_type(void);
PyObject *musify_cscan_ctx(Py_ssize_t ctx);
PyObject *musify_cscan_previous_token(PyObject *self, PyObject *args);
PyObject *musify_cscan_line_starts(PyObject *self, PyObject *arg);
PyObject *musify_cscan_walk_ast(PyObject *self, PyObject *args);
PyObject *musify_cscan_nodes_of(PyObject *self, PyObject *args);
PyObject *musify_cscan_named_positions(PyObject *self, PyObject *args);
PyObject *musify_cscan_unknown_use(PyObject *self, PyObject *args);

#endif
