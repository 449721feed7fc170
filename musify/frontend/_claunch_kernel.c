/* The kernel expression before a '<<<' (`kernel_start`) and the kernel definition count
 * (`count_kernels`); part of the _claunch extension (_claunch.c). */
#include "_claunch.h"

/* launches.py `_kernel_start`: where the kernel expression ending before the '<<<' at `lt`
 * starts (-1: none), with `_skip_ws_back`, `match_angle_back` and `ident_ending_at` inline */
static Py_ssize_t skip_back(int kind, const void *data, Py_ssize_t i) {
    while (i >= 0 && blank(READ(i))) i--;
    return i;
}

static Py_ssize_t word_run_start(int kind, const void *data, Py_ssize_t lo, Py_ssize_t end) {
    Py_ssize_t r = end;
    while (r > lo && word_char(READ(r - 1))) r--;
    return r;
}

static Py_ssize_t first_ident_start(int kind, const void *data, Py_ssize_t lo, Py_ssize_t end) {
    for (Py_ssize_t s = lo; s < end; s++)
        if (ascii_ident_start(READ(s))) return s;
    return -1;
}

static Py_ssize_t ident_ending_at(int kind, const void *data, Py_ssize_t lo, Py_ssize_t hi) {
    Py_ssize_t best = first_ident_start(kind, data, word_run_start(kind, data, lo, hi), hi);
    if (hi - 1 >= lo && READ(hi - 1) == '\n') {
        Py_ssize_t s = first_ident_start(kind, data, word_run_start(kind, data, lo, hi - 1), hi - 1);
        if (s >= 0 && (best < 0 || s < best)) best = s;
    }
    return best;
}

#define BACK_LIMIT 4096

Py_ssize_t kernel_start(int kind, const void *data, Py_ssize_t n, Py_ssize_t lt) {
    Py_ssize_t i = skip_back(kind, data, lt - 1), start = -1;
    while (i >= 0) {
        if (READ(i) == '>') {
            Py_ssize_t depth = 0, j = -1, floor = i - BACK_LIMIT < -1 ? -1 : i - BACK_LIMIT;
            for (Py_ssize_t x = i; x > floor; x--) {
                Py_UCS4 c = READ(x);
                if (c == '>') depth++;
                else if (c == '<') {
                    if (--depth == 0) {
                        j = x;
                        break;
                    }
                } else if (c == ';' || c == '{' || c == '}') break;
            }
            if (j < 0) return -1;
            i = skip_back(kind, data, j - 1);
        }
        Py_ssize_t found = ident_ending_at(kind, data, i - 256 > 0 ? i - 256 : 0, i + 1);
        if (found < 0) return READ(i >= 0 ? i : i + n) != ')' ? start : -1;  /* text[-1] as Python reads it */
        start = found;
        Py_ssize_t k = skip_back(kind, data, start - 1);
        if (k >= 1 && READ(k) == ':' && READ(k - 1) == ':') {
            i = skip_back(kind, data, k - 2);
            if (i < 0 || !(word_char(READ(i)) || READ(i) == '>')) return k - 1;  /* a leading '::' */
            continue;
        }
        return start;
    }
    return start;
}

PyObject *claunch_kernel_start(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text;
    Py_ssize_t lt;
    if (!PyArg_ParseTuple(args, "Un:kernel_start", &text, &lt)) return NULL;
    if (lt > PyUnicode_GET_LENGTH(text)) {  /* the Python reads text[lt - 1]: IndexError */
        PyErr_SetString(PyExc_IndexError, "kernel_start: offset outside the text");
        return NULL;
    }
    if (lt < 0) return PyLong_FromLong(-1);  /* the Python finds nothing before the text */
    return PyLong_FromSsize_t(kernel_start(PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), lt));
}

/* launches.py `count_kernel_defs`: each `word` (`__global__`) standing alone in code, counted
 * when `_DEF_NAME` (`([A-Za-z_]\w*)\s*(?:<[^;{()]*>\s*)?\(`) finds a name not in `not_names`
 * in the 400 characters after it (successive matches, as `finditer` gives them). */
static int is_not_name(int kind, const void *data, Py_ssize_t p, Py_ssize_t q, PyObject *not_names) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(not_names); k++) {
        PyObject *w = PyTuple_GET_ITEM(not_names, k);
        Py_ssize_t len = PyUnicode_GET_LENGTH(w);
        if (len != q - p) continue;
        Py_ssize_t x = 0;
        while (x < len && PyUnicode_READ_CHAR(w, x) == READ(p + x)) x++;
        if (x == len) return 1;
    }
    return 0;
}

/* the next `_DEF_NAME` match at or after `from` within `hi`: its end (-1: none), name span */
static Py_ssize_t def_name(int kind, const void *data, Py_ssize_t from, Py_ssize_t hi, Py_ssize_t *ns, Py_ssize_t *ne) {
    for (Py_ssize_t p = from; p < hi; p++) {
        if (!ascii_ident_start(READ(p))) continue;
        Py_ssize_t q, t = name_and_blanks(kind, data, p, hi, &q);
        if (t >= hi) break;  /* so from every later start in the word, and after it none has room */
        Py_ssize_t paren = -1;
        if (READ(t) == '(') paren = t;
        else if (READ(t) == '<') {
            Py_ssize_t x = t + 1;  /* the first of ";{()" after '<': it must be the '(' */
            while (x < hi) {
                Py_UCS4 c = READ(x);
                if (c == ';' || c == '{' || c == '(' || c == ')') break;
                x++;
            }
            if (x < hi && READ(x) == '(' && template_args_to(kind, data, t, x)) paren = x;
        }
        if (paren >= 0) {
            *ns = p;
            *ne = q;
            return paren + 1;
        }
        p = q - 1;  /* a later start in the same word reads the same end and blanks after it: no match */
    }
    return -1;
}

/* the count of `count_kernels` over the read spans (-1: an error was raised) */
Py_ssize_t count_kernel_defs(PyObject *text, const Py_ssize_t *sp_start, const Py_ssize_t *sp_end, Py_ssize_t nspans,
                             PyObject *word, PyObject *not_names) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), wlen = PyUnicode_GET_LENGTH(word), count = 0;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(not_names); k++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(not_names, k))) {
            PyErr_SetString(PyExc_TypeError, "count_kernels: not_names must be strings");
            return -1;
        }
    Py_ssize_t pos = 0;
    while (wlen && pos <= n - wlen) {
        Py_ssize_t s = claunch_find_from(text, word, pos, n);
        if (s == -2) return -1;
        if (s < 0) break;
        Py_ssize_t end = s + wlen;
        pos = end;
        if ((s && word_char(READ(s - 1))) || (end < n && word_char(READ(end)))) continue;  /* in a longer word */
        if (span_at(sp_start, sp_end, nspans, s) >= 0) continue;  /* in a comment or literal */
        Py_ssize_t hi = end + 400 < n ? end + 400 : n, from = end, ns, ne;
        while ((from = def_name(kind, data, from, hi, &ns, &ne)) >= 0) {
            if (!is_not_name(kind, data, ns, ne, not_names)) {
                count++;
                break;
            }
        }
    }
    return count;
}

PyObject *claunch_count_kernels(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *spans, *word, *not_names;
    if (!PyArg_ParseTuple(args, "UOUO!:count_kernels", &text, &spans, &word, &PyTuple_Type, &not_names)) return NULL;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(not_names); k++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(not_names, k))) {
            PyErr_SetString(PyExc_TypeError, "count_kernels: not_names must be strings");
            return NULL;
        }
    Py_ssize_t *sp_start = NULL, *sp_end = NULL;
    Py_ssize_t nspans = read_spans(spans, &sp_start, &sp_end);
    if (nspans < 0) return NULL;
    Py_ssize_t count = count_kernel_defs(text, sp_start, sp_end, nspans, word, not_names);
    PyMem_Free(sp_start);
    PyMem_Free(sp_end);
    return count < 0 ? NULL : PyLong_FromSsize_t(count);
}
