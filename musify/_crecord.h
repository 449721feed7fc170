/* What the parts of the _crecord extension share (musify/_crecord.c says what the module does):
 * the ASCII output buffer and JSON string writing, used by record() and entry(), and the functions
 * the module's method table names from the other files. */
#ifndef MUSIFY_CRECORD_H
#define MUSIFY_CRECORD_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* an output buffer of ASCII bytes: PyMem memory, or (`bytes` set) a bytes object's own, so the
 * text is handed to Python as it was written, not copied (entries()) */
typedef struct {
    char *buf;
    Py_ssize_t len, cap;
    PyObject *bytes;
} Out;

int out_realloc(Out *o, Py_ssize_t more);
/* room for `more` bytes: inline while there is room (a dozen writes an edit), else the realloc */
static inline int out_grow(Out *o, Py_ssize_t more) { return o->len + more <= o->cap ? 0 : out_realloc(o, more); }
PyObject *out_str(Out *o);
/* text[lo:hi] as a JSON string, as json.encoder.encode_basestring_ascii writes it */
int out_quoted(Out *o, PyObject *text, Py_ssize_t lo, Py_ssize_t hi);

static inline int out_write(Out *o, const char *s, Py_ssize_t n) {
    if (out_grow(o, n) < 0) return -1;
    memcpy(o->buf + o->len, s, (size_t)n);
    o->len += n;
    return 0;
}

/* the two digits of each number under 100, for out_int */
static const char OUT_DIGITS2[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* v in decimal, two digits at a time from a table, inline (lines and columns, most under 1,000:
 * four an edit, where a division per digit and a call each were a fifth of record()'s own work) */
static inline int out_int(Out *o, long long v) {
    char tmp[24];
    int n = 24;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    while (u >= 100) {
        unsigned d = (unsigned)(u % 100);
        u /= 100;
        tmp[--n] = OUT_DIGITS2[2 * d + 1];
        tmp[--n] = OUT_DIGITS2[2 * d];
    }
    if (u >= 10) {
        tmp[--n] = OUT_DIGITS2[2 * u + 1];
        tmp[--n] = OUT_DIGITS2[2 * u];
    } else {
        tmp[--n] = (char)('0' + u);
    }
    if (v < 0) tmp[--n] = '-';
    if (out_grow(o, 24 - n) < 0) return -1;
    char *d = o->buf + o->len;
    o->len += 24 - n;
    while (n < 24) *d++ = tmp[n++];
    return 0;
}

#define OUT_LIT(o, s) out_write((o), (s), (Py_ssize_t)sizeof(s) - 1)

/* an ASCII str's characters as they are */
static inline int out_ascii(Out *o, PyObject *s) {
    return out_write(o, (const char *)PyUnicode_DATA(s), PyUnicode_GET_LENGTH(s));
}

/* PyUnicode_Compare of two exact str (the order of their code points), with memcmp for two
 * one-byte strings (whose bytes are their code points) */
static inline int str_order(PyObject *a, PyObject *b) {
    if (a == b) return 0;
    if (PyUnicode_KIND(a) == PyUnicode_1BYTE_KIND && PyUnicode_KIND(b) == PyUnicode_1BYTE_KIND) {
        Py_ssize_t la = PyUnicode_GET_LENGTH(a), lb = PyUnicode_GET_LENGTH(b);
        int c = memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)(la < lb ? la : lb));
        return c ? c : (la > lb) - (la < lb);
    }
    return PyUnicode_Compare(a, b);
}

/* the module's functions kept in the other files: _crecord_entry.c, _crecord_totals.c */
PyObject *crecord_entry(PyObject *self, PyObject *args);
PyObject *crecord_entries(PyObject *self, PyObject *args);
PyObject *crecord_add_counts(PyObject *self, PyObject *args);
PyObject *crecord_sums(PyObject *self, PyObject *args);
PyObject *crecord_line_count(PyObject *self, PyObject *text);
PyObject *crecord_sorted_counts(PyObject *self, PyObject *d);
/* how many of the n bytes at p are '\n' (sixteen compared at once) */
Py_ssize_t crecord_newlines_1(const unsigned char *p, Py_ssize_t n);

#endif
