/* What the parts of the _claunch extension share (musify/frontend/_claunch.c says what the module
 * does): the per-kind dispatch macros, the character classes, the growable arrays and span reading
 * every search uses, and the functions the module's method table names from the other files. */
#ifndef MUSIFY_CLAUNCH_H
#define MUSIFY_CLAUNCH_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* the loops below are inlined once per string kind (`shape_of`, `pair_brackets`), so that each
 * character read is an array read rather than a switch on the kind */
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define BY_KIND(f, ...)                                                                                    \
    (kind == PyUnicode_1BYTE_KIND   ? f(PyUnicode_1BYTE_KIND, __VA_ARGS__)                                     \
     : kind == PyUnicode_2BYTE_KIND ? f(PyUnicode_2BYTE_KIND, __VA_ARGS__)                                     \
                                    : f(PyUnicode_4BYTE_KIND, __VA_ARGS__))

#define READ(i) PyUnicode_READ(kind, data, (i))

static inline int blank(Py_UCS4 c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\\'; }
static inline int ascii_ident_start(Py_UCS4 c) { return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static inline int word_char(Py_UCS4 c) { return c == '_' || Py_UNICODE_ISALNUM(c); }

/* What `_NAME_BEFORE_PAREN` (hazards/common.py, `name_before` in _claunch_defs.c) and `_DEF_NAME`
 * (launches.py, `def_name` in _claunch_kernel.c) share, `([A-Za-z_]\w*)\s*(?:<[^;{()]*>\s*)?`, read
 * once here so that the two searches keep matching the same names. */
/* `\w*\s*` after the name's first character at `p`, within `hi`: sets the name's end `*q` and
 * returns the offset after the blanks (`hi`: the blanks reach it) */
static inline Py_ssize_t name_and_blanks(int kind, const void *data, Py_ssize_t p, Py_ssize_t hi, Py_ssize_t *q) {
    Py_ssize_t e = p + 1;
    while (e < hi && word_char(READ(e))) e++;
    *q = e;
    while (e < hi && Py_UNICODE_ISSPACE(READ(e))) e++;
    return e;
}
/* whether text[t:end], `t` holding a '<', is the template arguments `<[^;{()]*>\s*` */
static inline int template_args_to(int kind, const void *data, Py_ssize_t t, Py_ssize_t end) {
    Py_ssize_t r = end - 1;  /* the '>' closing the arguments: the last character not blank */
    while (r > t && Py_UNICODE_ISSPACE(READ(r))) r--;
    int ok = r > t && READ(r) == '>';
    for (Py_ssize_t x = t + 1; ok && x < r; x++) {
        Py_UCS4 c = READ(x);
        ok = !(c == ';' || c == '{' || c == '(' || c == ')');
    }
    return ok;
}

/* _claunch.c: the helpers the searches share */
int grow(void **buf, Py_ssize_t *cap, Py_ssize_t need, size_t size);
Py_ssize_t read_spans(PyObject *spans, Py_ssize_t **starts, Py_ssize_t **ends);
int append_row5(PyObject *out, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c, Py_ssize_t d, Py_ssize_t e);
Py_ssize_t span_at(const Py_ssize_t *starts, const Py_ssize_t *ends, Py_ssize_t nspans, Py_ssize_t pos);

/* _claunch_kernel.c */
Py_ssize_t kernel_start(int kind, const void *data, Py_ssize_t n, Py_ssize_t lt);
PyObject *claunch_kernel_start(PyObject *self, PyObject *args);
PyObject *claunch_count_kernels(PyObject *self, PyObject *args);
Py_ssize_t count_kernel_defs(PyObject *text, const Py_ssize_t *sp_start, const Py_ssize_t *sp_end, Py_ssize_t nspans,
                             PyObject *word, PyObject *not_names);
/* _claunch_structure.c */
PyObject *claunch_structure(PyObject *self, PyObject *args);
PyObject *claunch_launches(PyObject *self, PyObject *args);
PyObject *claunch_structure_counts(PyObject *self, PyObject *args);
/* _claunch_defs.c */
PyObject *claunch_definitions(PyObject *self, PyObject *args);
PyObject *claunch_qualifier_spans(PyObject *self, PyObject *args);
Py_ssize_t claunch_find_from(PyObject *text, PyObject *w, Py_ssize_t from, Py_ssize_t n);
PyObject *claunch_pairs(PyObject *self, PyObject *args);
/* _claunch_shape.c */
PyObject *musify_claunch_launch_shape(PyObject *self, PyObject *args);
int launch_well_formed(PyObject *text, Py_ssize_t start, Py_ssize_t end, PyObject *reserved);
/* _claunch_literals.c */
PyObject *musify_claunch_literals_in(PyObject *self, PyObject *args);
/* _claunch_warp.c */
PyObject *musify_claunch_warp_marks(PyObject *self, PyObject *args);
PyObject *musify_claunch_warp_bodies(PyObject *self, PyObject *args);
PyObject *musify_claunch_warp_loops(PyObject *self, PyObject *args);
PyObject *musify_claunch_warp_literals(PyObject *self, PyObject *args);

#endif
