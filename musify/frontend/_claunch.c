/* Launch detection's bracket pass in C: `launches._structure_python` (musify/frontend/launches.py)
 * is the reference, and tests/test_claunch_equivalence.py proves both give the same structure on
 * generated inputs. A module of its own (not part of `_cscan`) so that either builds without the
 * other; launches.py falls back to the Python pass when this one was not built.
 *
 * structure(text, spans) -> (closer, semicolon, config_end): one pass over the tokens
 * `<<<`, `>>>`, brackets and `;` of `text` that start in code (not inside one of `spans`, the
 * scanner's (start, end, ...) comment and literal spans in order). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

typedef struct {
    Py_ssize_t opener;    /* offset of the opening bracket */
    Py_ssize_t outer;     /* where the '<<<' pending outside it start in `lts` */
    int asked;            /* a '(' directly after a '>>>': an argument list */
} Frame;

enum { T_NONE, T_LT, T_GT, T_OPEN, T_PAREN, T_CLOSE, T_SEMI };

static int grow(void **buf, Py_ssize_t *cap, Py_ssize_t need, size_t size) {
    if (need <= *cap) return 0;
    Py_ssize_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    void *p = PyMem_Realloc(*buf, (size_t)n * size);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    *buf = p;
    *cap = n;
    return 0;
}

static int set_int(PyObject *dict, Py_ssize_t key, Py_ssize_t value) {
    PyObject *k = PyLong_FromSsize_t(key), *v = PyLong_FromSsize_t(value);
    int r = (k && v) ? PyDict_SetItem(dict, k, v) : -1;
    Py_XDECREF(k);
    Py_XDECREF(v);
    return r;
}

static int add_int(PyObject *set, Py_ssize_t key) {
    PyObject *k = PyLong_FromSsize_t(key);
    int r = k ? PySet_Add(set, k) : -1;
    Py_XDECREF(k);
    return r;
}

/* the spans' starts and ends as two arrays (each item a sequence whose first two are ints) */
static Py_ssize_t read_spans(PyObject *spans, Py_ssize_t **starts, Py_ssize_t **ends) {
    PyObject *seq = PySequence_Fast(spans, "structure: spans must be a sequence");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    *starts = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    *ends = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    if (!*starts || !*ends) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, k);
        PyObject *s, *e;
        if (PyTuple_Check(item) && PyTuple_GET_SIZE(item) >= 2) {
            s = Py_NewRef(PyTuple_GET_ITEM(item, 0));
            e = Py_NewRef(PyTuple_GET_ITEM(item, 1));
        } else {
            s = PySequence_GetItem(item, 0);
            e = s ? PySequence_GetItem(item, 1) : NULL;
        }
        (*starts)[k] = s ? PyLong_AsSsize_t(s) : -1;
        (*ends)[k] = e ? PyLong_AsSsize_t(e) : -1;
        Py_XDECREF(s);
        Py_XDECREF(e);
        if (PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    return n;
}

static inline int blank(Py_UCS4 c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\\'; }

static PyObject *claunch_structure(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *spans;
    if (!PyArg_ParseTuple(args, "UO:structure", &text, &spans)) return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_ssize_t *sp_start = NULL, *sp_end = NULL, *lts = NULL;
    Frame *stack = NULL;
    Py_ssize_t lts_cap = 0, stack_cap = 0, top = 0, base = 0, depth = 0;
    PyObject *closer = PyDict_New(), *semicolon = PySet_New(NULL), *config_end = PyDict_New();
    PyObject *result = NULL;
    if (!closer || !semicolon || !config_end) goto done;
    Py_ssize_t nspans = read_spans(spans, &sp_start, &sp_end);
    if (nspans < 0) goto done;
    Py_ssize_t j = 0, after_config = -1;
    for (Py_ssize_t i = 0; i < n;) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        int tok = T_NONE, len = 1;
        switch (c) {
        case '<':
        case '>':
            if (i + 2 < n && PyUnicode_READ(kind, data, i + 1) == c && PyUnicode_READ(kind, data, i + 2) == c) {
                tok = c == '<' ? T_LT : T_GT;
                len = 3;
            }
            break;
        case '(': tok = T_PAREN; break;
        case '[': case '{': tok = T_OPEN; break;
        case ')': case ']': case '}': tok = T_CLOSE; break;
        case ';': tok = T_SEMI; break;
        default: break;
        }
        if (tok == T_NONE) {
            i++;
            continue;
        }
        while (j < nspans && sp_end[j] <= i) j++;
        if (j < nspans && sp_start[j] <= i) {  /* starts in a comment or literal */
            i += len;
            continue;
        }
        Py_ssize_t config_just_ended = after_config;
        after_config = -1;
        if (tok == T_LT) {
            if (grow((void **)&lts, &lts_cap, top + 1, sizeof(Py_ssize_t)) < 0) goto done;
            lts[top++] = i;
        } else if (tok == T_GT || tok == T_SEMI || tok == T_CLOSE) {
            for (Py_ssize_t k = base; k < top; k++)
                if (set_int(config_end, lts[k], tok == T_GT ? i : -1) < 0) goto done;
            top = base;
            if (tok == T_GT) {
                after_config = i + 3;
            } else if (tok == T_SEMI && depth) {
                if (stack[depth - 1].asked && add_int(semicolon, stack[depth - 1].opener) < 0) goto done;
            } else if (tok == T_CLOSE && depth) {
                Frame f = stack[--depth];
                base = f.outer;
                if (f.asked && set_int(closer, f.opener, i) < 0) goto done;
            }
        } else {  /* an opening bracket */
            int asked = 0;
            if (tok == T_PAREN && config_just_ended >= 0) {
                asked = 1;
                for (Py_ssize_t k = config_just_ended; k < i; k++)
                    if (!blank(PyUnicode_READ(kind, data, k))) {
                        asked = 0;
                        break;
                    }
            }
            if (grow((void **)&stack, &stack_cap, depth + 1, sizeof(Frame)) < 0) goto done;
            stack[depth++] = (Frame){i, base, asked};
            base = top;
        }
        i += len;
    }
    for (Py_ssize_t k = 0; k < top; k++)  /* never ended: the pending ones and those outside open brackets */
        if (set_int(config_end, lts[k], -1) < 0) goto done;
    for (Py_ssize_t k = 0; k < depth; k++)
        if (stack[k].asked && set_int(closer, stack[k].opener, -1) < 0) goto done;
    result = PyTuple_Pack(3, closer, semicolon, config_end);
done:
    Py_XDECREF(closer);
    Py_XDECREF(semicolon);
    Py_XDECREF(config_end);
    PyMem_Free(sp_start);
    PyMem_Free(sp_end);
    PyMem_Free(lts);
    PyMem_Free(stack);
    return result;
}

/* --- definitions(text, spans, candidates): the search of hazards/common.py `device_functions` ---
 * `candidates` are the (start, end) of the qualifier words, in order; for each one in code that
 * starts at or after the end of the last definition found, `_definition_after` is answered: the
 * first code character of `;=[(` after it must be '(', whose closing ')' (parentheses only,
 * code only) is followed, at the first code ';' or '{', by a '{' that closes too (braces only).
 * The answer per definition is (start, end of the qualifier, '(', '{', just after '}'). Both
 * bracket kinds are paired in one pass over the code (made when first asked), and each search
 * for the next stop character reuses the last answer while it still lies ahead, so the whole
 * call is linear in the text however many qualifiers there are. */

typedef struct {
    Py_ssize_t *open, *close;  /* opener offsets in order and their closers (-1: never closed) */
    Py_ssize_t n, cap;
} Pairs;

/* the span holding `pos`, or -1 (spans sorted and disjoint) */
static Py_ssize_t span_at(const Py_ssize_t *starts, const Py_ssize_t *ends, Py_ssize_t nspans, Py_ssize_t pos) {
    Py_ssize_t lo = 0, hi = nspans;  /* bisect_right(starts, pos) */
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (starts[mid] <= pos) lo = mid + 1;
        else hi = mid;
    }
    return (lo > 0 && pos < ends[lo - 1]) ? lo - 1 : -1;
}

/* the first code offset at or after `pos` whose character is in `stops`, or -1 */
static Py_ssize_t code_search(int kind, const void *data, Py_ssize_t n, const Py_ssize_t *starts,
                              const Py_ssize_t *ends, Py_ssize_t nspans, Py_ssize_t pos, const char *stops) {
    for (Py_ssize_t i = pos; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c >= 128 || !strchr(stops, (int)c) || c == 0) continue;
        Py_ssize_t k = span_at(starts, ends, nspans, i);
        if (k >= 0) i = ends[k] - 1;  /* jump over the comment or literal */
        else return i;
    }
    return -1;
}

/* pair every code '(' with its ')' and every '{' with its '}' (each kind counted on its own) */
static int pair_brackets(int kind, const void *data, Py_ssize_t n, const Py_ssize_t *starts,
                         const Py_ssize_t *ends, Py_ssize_t nspans, Pairs *pairs) {
    Py_ssize_t *stack[2] = {NULL, NULL}, depth[2] = {0, 0}, cap[2] = {0, 0}, j = 0;
    int r = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        int which;
        if (c == '(' || c == ')') which = 0;
        else if (c == '{' || c == '}') which = 1;
        else continue;
        while (j < nspans && ends[j] <= i) j++;
        if (j < nspans && starts[j] <= i) continue;
        Pairs *p = &pairs[which];
        if (c == '(' || c == '{') {
            if (grow((void **)&p->open, &p->cap, p->n + 1, sizeof(Py_ssize_t)) < 0) goto done;
            p->close = PyMem_Realloc(p->close, (size_t)p->cap * sizeof(Py_ssize_t));
            if (!p->close) {
                PyErr_NoMemory();
                goto done;
            }
            if (grow((void **)&stack[which], &cap[which], depth[which] + 1, sizeof(Py_ssize_t)) < 0) goto done;
            p->open[p->n] = i;
            p->close[p->n] = -1;
            stack[which][depth[which]++] = p->n++;
        } else if (depth[which]) {
            p->close[stack[which][--depth[which]]] = i;
        }
    }
    r = 0;
done:
    PyMem_Free(stack[0]);
    PyMem_Free(stack[1]);
    return r;
}

/* the closer of the opener at `pos` (one of `p`'s openers), or -1 */
static Py_ssize_t closer_of(const Pairs *p, Py_ssize_t pos) {
    Py_ssize_t lo = 0, hi = p->n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (p->open[mid] < pos) lo = mid + 1;
        else hi = mid;
    }
    return (lo < p->n && p->open[lo] == pos) ? p->close[lo] : -1;
}

static PyObject *claunch_definitions(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *spans, *candidates;
    if (!PyArg_ParseTuple(args, "UOO:definitions", &text, &spans, &candidates)) return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_ssize_t *sp_start = NULL, *sp_end = NULL;
    Pairs pairs[2] = {{NULL, NULL, 0, 0}, {NULL, NULL, 0, 0}};
    int paired = 0;
    PyObject *out = PyList_New(0), *seq = NULL, *result = NULL;
    if (!out) return NULL;
    Py_ssize_t nspans = read_spans(spans, &sp_start, &sp_end);
    if (nspans < 0) goto done;
    seq = PySequence_Fast(candidates, "definitions: candidates must be a sequence");
    if (!seq) goto done;
    Py_ssize_t last_end = -1, stop_at = -1, stop_from = -1, body_at = -1, body_from = -1;
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(seq); k++) {
        Py_ssize_t start, end;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, k), "nn:definitions", &start, &end)) goto done;
        if (span_at(sp_start, sp_end, nspans, start) >= 0 || start < last_end) continue;
        /* the last search's answer stands for any later start up to it (-1: nothing after it) */
        if (stop_from < 0 || end < stop_from || (stop_at >= 0 && end > stop_at)) {
            stop_at = code_search(kind, data, n, sp_start, sp_end, nspans, end, ";=[(");
            stop_from = end;
        }
        Py_ssize_t paren = stop_at;
        if (paren < 0 || PyUnicode_READ(kind, data, paren) != '(') continue;
        if (!paired) {
            if (pair_brackets(kind, data, n, sp_start, sp_end, nspans, pairs) < 0) goto done;
            paired = 1;
        }
        Py_ssize_t close = closer_of(&pairs[0], paren);
        if (close < 0) continue;
        if (body_from < 0 || close + 1 < body_from || (body_at >= 0 && close + 1 > body_at)) {
            body_at = code_search(kind, data, n, sp_start, sp_end, nspans, close + 1, ";{");
            body_from = close + 1;
        }
        Py_ssize_t brace = body_at;
        if (brace < 0 || PyUnicode_READ(kind, data, brace) == ';') continue;
        Py_ssize_t shut = closer_of(&pairs[1], brace);
        if (shut < 0) continue;
        PyObject *row = Py_BuildValue("(nnnnn)", start, end, paren, brace, shut + 1);
        if (!row || PyList_Append(out, row) < 0) {
            Py_XDECREF(row);
            goto done;
        }
        Py_DECREF(row);
        last_end = shut + 1;
    }
    result = Py_NewRef(out);
done:
    Py_DECREF(out);
    Py_XDECREF(seq);
    PyMem_Free(sp_start);
    PyMem_Free(sp_end);
    for (int w = 0; w < 2; w++) {
        PyMem_Free(pairs[w].open);
        PyMem_Free(pairs[w].close);
    }
    return result;
}

static PyMethodDef methods[] = {
    {"structure", claunch_structure, METH_VARARGS,
     "structure(text, spans) -> (closer, semicolon, config_end): launches._structure_python in C"},
    {"definitions", claunch_definitions, METH_VARARGS,
     "definitions(text, spans, candidates) -> [(start, end, paren, brace, close)]: device_functions' search in C"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_claunch", "Launch detection's bracket pass in C.", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__claunch(void) { return PyModule_Create(&module); }
