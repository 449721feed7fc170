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

/* the spans' starts and ends as two arrays (each item a sequence whose first two are ints); on
 * failure both are freed and NULL, so that no caller's error path can leak them */
static Py_ssize_t read_spans(PyObject *spans, Py_ssize_t **starts, Py_ssize_t **ends) {
    PyObject *seq = PySequence_Fast(spans, "structure: spans must be a sequence");
    if (!seq) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    *starts = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    *ends = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(Py_ssize_t));
    if (!*starts || !*ends) {
        PyErr_NoMemory();
        goto fail;
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
        if (PyErr_Occurred()) goto fail;
    }
    Py_DECREF(seq);
    return n;
fail:
    Py_DECREF(seq);
    PyMem_Free(*starts);
    PyMem_Free(*ends);
    *starts = *ends = NULL;
    return -1;
}

/* appends the tuple (a, b, c, d, e) to the list `out`; -1 on failure */
static int append_row5(PyObject *out, Py_ssize_t a, Py_ssize_t b, Py_ssize_t c, Py_ssize_t d, Py_ssize_t e) {
    PyObject *row = Py_BuildValue("(nnnnn)", a, b, c, d, e);
    int r = row ? PyList_Append(out, row) : -1;
    Py_XDECREF(row);
    return r;
}

static inline int blank(Py_UCS4 c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\\'; }

/* The structure of `launches._structure_python` in arrays: each code '<<<' in order with the
 * offset of the '>>>' ending its configuration (-1: a ';' or a closer first, or none), and each
 * "asked" opening parenthesis (directly after a '>>>') in order with its closer (-1: never
 * closed) and whether a ';' stands directly inside it. */
typedef struct {
    Py_ssize_t *lt, *lt_end, nlt, caplt;
    Py_ssize_t *op, *op_close, nop, capop;
    char *op_semi;
} Shape;

static void shape_free(Shape *s) {
    PyMem_Free(s->lt);
    PyMem_Free(s->lt_end);
    PyMem_Free(s->op);
    PyMem_Free(s->op_close);
    PyMem_Free(s->op_semi);
}

/* room for one more entry in both (or all three) arrays of a kind */
static int shape_grow(Py_ssize_t **a, Py_ssize_t **b, char **c, Py_ssize_t n, Py_ssize_t *cap) {
    if (n < *cap) return 0;
    Py_ssize_t want = *cap ? *cap * 2 : 16, was = *cap;
    Py_ssize_t *na = PyMem_Realloc(*a, (size_t)want * sizeof(Py_ssize_t));
    if (na) *a = na;
    Py_ssize_t *nb = na ? PyMem_Realloc(*b, (size_t)want * sizeof(Py_ssize_t)) : NULL;
    if (nb) *b = nb;
    char *nc = (nb && c) ? PyMem_Realloc(*c, (size_t)want) : NULL;
    if (nc) *c = nc;
    if (!na || !nb || (c && !nc)) {
        PyErr_NoMemory();
        return -1;
    }
    (void)was;
    *cap = want;
    return 0;
}

/* the loops below are inlined once per string kind (`shape_of`, `pair_brackets`), so that each
 * character read is an array read rather than a switch on the kind */
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define BY_KIND(f, ...)                                                                                    \
    (kind == PyUnicode_1BYTE_KIND   ? f(PyUnicode_1BYTE_KIND, __VA_ARGS__)                                     \
     : kind == PyUnicode_2BYTE_KIND ? f(PyUnicode_2BYTE_KIND, __VA_ARGS__)                                     \
                                    : f(PyUnicode_4BYTE_KIND, __VA_ARGS__))

/* the characters a token of the bracket pass starts with (`<`, `>`, brackets, `;`): the others
 * are passed over with one table read rather than the switch below (the pass reads every
 * character of a file with a launch: most of the structure pass's time on small files) */
static const unsigned char BRACKET_PASS_CHAR[128] = {
    ['<'] = 1, ['>'] = 1, ['('] = 1, ['['] = 1, ['{'] = 1, [')'] = 1, [']'] = 1, ['}'] = 1, [';'] = 1};

static ALWAYS_INLINE int shape_of_kind(int kind, const void *data, Py_ssize_t n, const Py_ssize_t *sp_start,
                                       const Py_ssize_t *sp_end, Py_ssize_t nspans, Shape *out) {
    Py_ssize_t *pending = NULL;  /* indices into out->lt of the '<<<' still looking for their '>>>' */
    Frame *stack = NULL;
    Py_ssize_t pending_cap = 0, stack_cap = 0, top = 0, base = 0, depth = 0;
    int r = -1;
    Py_ssize_t j = 0, after_config = -1;
    for (Py_ssize_t i = 0; i < n;) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c >= 128 || !BRACKET_PASS_CHAR[c]) {  /* most characters: no token starts here */
            i++;
            continue;
        }
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
            if (shape_grow(&out->lt, &out->lt_end, NULL, out->nlt, &out->caplt) < 0) goto done;
            if (grow((void **)&pending, &pending_cap, top + 1, sizeof(Py_ssize_t)) < 0) goto done;
            out->lt[out->nlt] = i;
            out->lt_end[out->nlt] = -1;
            pending[top++] = out->nlt++;
        } else if (tok == T_GT || tok == T_SEMI || tok == T_CLOSE) {
            for (Py_ssize_t k = base; k < top; k++) out->lt_end[pending[k]] = tok == T_GT ? i : -1;
            top = base;
            if (tok == T_GT) {
                after_config = i + 3;
            } else if (tok == T_SEMI && depth) {
                if (stack[depth - 1].asked) out->op_semi[stack[depth - 1].opener] = 1;
            } else if (tok == T_CLOSE && depth) {
                Frame f = stack[--depth];
                base = f.outer;
                if (f.asked) out->op_close[f.opener] = i;
            }
        } else {  /* an opening bracket; an asked one is known by its index in out->op */
            int asked = 0;
            if (tok == T_PAREN && config_just_ended >= 0) {
                asked = 1;
                for (Py_ssize_t k = config_just_ended; k < i; k++)
                    if (!blank(PyUnicode_READ(kind, data, k))) {
                        asked = 0;
                        break;
                    }
            }
            Py_ssize_t opener = i;
            if (asked) {
                if (shape_grow(&out->op, &out->op_close, &out->op_semi, out->nop, &out->capop) < 0) goto done;
                out->op[out->nop] = i;
                out->op_close[out->nop] = -1;
                out->op_semi[out->nop] = 0;
                opener = out->nop++;
            }
            if (grow((void **)&stack, &stack_cap, depth + 1, sizeof(Frame)) < 0) goto done;
            stack[depth++] = (Frame){opener, base, asked};
            base = top;
        }
        i += len;
    }
    r = 0;  /* '<<<' never ended and asked openers never closed keep their -1 */
done:
    PyMem_Free(pending);
    PyMem_Free(stack);
    return r;
}

static int shape_of(int kind, const void *data, Py_ssize_t n, const Py_ssize_t *sp_start, const Py_ssize_t *sp_end,
                    Py_ssize_t nspans, Shape *out) {
    return BY_KIND(shape_of_kind, data, n, sp_start, sp_end, nspans, out);
}

static PyObject *claunch_structure(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *spans;
    if (!PyArg_ParseTuple(args, "UO:structure", &text, &spans)) return NULL;
    Py_ssize_t *sp_start = NULL, *sp_end = NULL;
    Shape s = {0};
    PyObject *closer = PyDict_New(), *semicolon = PySet_New(NULL), *config_end = PyDict_New();
    PyObject *result = NULL;
    if (!closer || !semicolon || !config_end) goto done;
    Py_ssize_t nspans = read_spans(spans, &sp_start, &sp_end);
    if (nspans < 0) goto done;
    if (shape_of(PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), sp_start, sp_end, nspans,
                 &s) < 0)
        goto done;
    for (Py_ssize_t k = 0; k < s.nlt; k++)
        if (set_int(config_end, s.lt[k], s.lt_end[k]) < 0) goto done;
    for (Py_ssize_t k = 0; k < s.nop; k++) {
        if (set_int(closer, s.op[k], s.op_close[k]) < 0) goto done;
        if (s.op_semi[k] && add_int(semicolon, s.op[k]) < 0) goto done;
    }
    result = PyTuple_Pack(3, closer, semicolon, config_end);
done:
    Py_XDECREF(closer);
    Py_XDECREF(semicolon);
    Py_XDECREF(config_end);
    PyMem_Free(sp_start);
    PyMem_Free(sp_end);
    shape_free(&s);
    return result;
}

/* the index of `key` in the sorted `a` of `n`, or -1 */
static Py_ssize_t find_sorted(const Py_ssize_t *a, Py_ssize_t n, Py_ssize_t key) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (a[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && a[lo] == key ? lo : -1;
}

static Py_ssize_t kernel_start(int kind, const void *data, Py_ssize_t n, Py_ssize_t lt);

/* text.find("<<<", pos), or `n` where there is none: memchr to each '<' in a one-byte text
 * (the loop below read every character of a file with a launch a second time) */
static Py_ssize_t find_launch_open(int kind, const void *data, Py_ssize_t n, Py_ssize_t pos) {
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *s = data;
        while (pos + 3 <= n) {
            const Py_UCS1 *p = memchr(s + pos, '<', (size_t)(n - 2 - pos));  /* a '<' with two after it */
            if (!p) return n;
            pos = p - s;
            if (s[pos + 1] == '<' && s[pos + 2] == '<') return pos;
            pos++;
        }
        return n;
    }
    while (pos + 3 <= n && !(PyUnicode_READ(kind, data, pos) == '<' && PyUnicode_READ(kind, data, pos + 1) == '<'
                             && PyUnicode_READ(kind, data, pos + 2) == '<'))
        pos++;
    return pos + 3 <= n ? pos : n;
}

/* launches(text, spans) -> [(kernel start, '<<<', '>>>', '(', ')')]: launches.launch_spans_python
 * in C, its loop over the text's '<<<' answered from the structure's arrays */
static PyObject *claunch_launches(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *spans;
    if (!PyArg_ParseTuple(args, "UO:launches", &text, &spans)) return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_ssize_t *sp_start = NULL, *sp_end = NULL;
    Shape s = {0};
    PyObject *out = PyList_New(0), *result = NULL;
    if (!out) return NULL;
    Py_ssize_t nspans = read_spans(spans, &sp_start, &sp_end);
    if (nspans < 0 || shape_of(kind, data, n, sp_start, sp_end, nspans, &s) < 0) goto done;
    for (Py_ssize_t pos = 0; pos + 3 <= n;) {  /* text.find("<<<", pos), as the Python loops */
        Py_ssize_t lt = find_launch_open(kind, data, n, pos);
        if (lt + 3 > n) break;
        pos = lt + 3;
        Py_ssize_t k = find_sorted(s.lt, s.nlt, lt);  /* absent: not in code, or inside another '<<<' */
        Py_ssize_t gt = k >= 0 ? s.lt_end[k] : -1;
        if (gt < 0) continue;
        Py_ssize_t a = gt + 3;
        while (a < n && blank(PyUnicode_READ(kind, data, a))) a++;
        Py_ssize_t o = a < n && PyUnicode_READ(kind, data, a) == '(' ? find_sorted(s.op, s.nop, a) : -1;
        Py_ssize_t close = o >= 0 ? s.op_close[o] : -1;
        if (close < 0 || s.op_semi[o]) continue;
        Py_ssize_t start = kernel_start(kind, data, n, lt);
        if (start < 0) continue;
        if (append_row5(out, start, lt, gt, a, close) < 0) goto done;
        pos = close + 1;
    }
    result = Py_NewRef(out);
done:
    Py_DECREF(out);
    PyMem_Free(sp_start);
    PyMem_Free(sp_end);
    shape_free(&s);
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
static ALWAYS_INLINE int pair_brackets_kind(int kind, const void *data, Py_ssize_t n, const Py_ssize_t *starts,
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
            Py_ssize_t *closes = PyMem_Realloc(p->close, (size_t)p->cap * sizeof(Py_ssize_t));
            if (!closes) {  /* p->close stays valid (and is freed by the caller) */
                PyErr_NoMemory();
                goto done;
            }
            p->close = closes;
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

static int pair_brackets(int kind, const void *data, Py_ssize_t n, const Py_ssize_t *starts, const Py_ssize_t *ends,
                         Py_ssize_t nspans, Pairs *pairs) {
    return BY_KIND(pair_brackets_kind, data, n, starts, ends, nspans, pairs);
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

#define READ(i) PyUnicode_READ(kind, data, (i))

static inline int ascii_ident_start(Py_UCS4 c) { return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
static inline int word_char(Py_UCS4 c) { return c == '_' || Py_UNICODE_ISALNUM(c); }

/* `hazards/common.py _NAME_BEFORE_PAREN.search(text, lo, hi)`, the regex
 * `([A-Za-z_]\w*)\s*(?:<[^;{()]*>\s*)?$`: the leftmost start whose word run, blanks and optional
 * template arguments reach `hi` (a `$` before a final newline is reached the same way, the
 * newline being a blank). Sets the name's span; 0 when there is none. */
static int name_before(int kind, const void *data, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t *ns, Py_ssize_t *ne) {
    for (Py_ssize_t p = lo; p < hi; p++) {
        if (!ascii_ident_start(READ(p))) continue;
        Py_ssize_t q = p + 1;
        while (q < hi && word_char(READ(q))) q++;
        Py_ssize_t t = q;
        while (t < hi && Py_UNICODE_ISSPACE(READ(t))) t++;
        int ok = t == hi;
        if (!ok && READ(t) == '<') {
            Py_ssize_t r = hi - 1;  /* the '>' closing the arguments: the last character not blank */
            while (r > t && Py_UNICODE_ISSPACE(READ(r))) r--;
            ok = r > t && READ(r) == '>';
            for (Py_ssize_t x = t + 1; ok && x < r; x++) {
                Py_UCS4 c = READ(x);
                ok = !(c == ';' || c == '{' || c == '(' || c == ')');
            }
        }
        if (ok) {
            *ns = p;
            *ne = q;
            return 1;
        }
    }
    return 0;
}

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

static Py_ssize_t kernel_start(int kind, const void *data, Py_ssize_t n, Py_ssize_t lt) {
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

static PyObject *claunch_kernel_start(PyObject *Py_UNUSED(self), PyObject *args) {
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
        Py_ssize_t q = p + 1;
        while (q < hi && word_char(READ(q))) q++;
        Py_ssize_t t = q;
        while (t < hi && Py_UNICODE_ISSPACE(READ(t))) t++;
        if (t >= hi) continue;
        Py_ssize_t paren = -1;
        if (READ(t) == '(') paren = t;
        else if (READ(t) == '<') {
            Py_ssize_t x = t + 1;  /* the first of ";{()" after '<': it must be the '(' */
            while (x < hi) {
                Py_UCS4 c = READ(x);
                if (c == ';' || c == '{' || c == '(' || c == ')') break;
                x++;
            }
            if (x < hi && READ(x) == '(') {
                Py_ssize_t r = x - 1;
                while (r > t && Py_UNICODE_ISSPACE(READ(r))) r--;
                if (r > t && READ(r) == '>') paren = x;
            }
        }
        if (paren >= 0) {
            *ns = p;
            *ne = q;
            return paren + 1;
        }
    }
    return -1;
}

static PyObject *claunch_count_kernels(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *spans, *word, *not_names;
    if (!PyArg_ParseTuple(args, "UOUO!:count_kernels", &text, &spans, &word, &PyTuple_Type, &not_names)) return NULL;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(not_names); k++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(not_names, k))) {
            PyErr_SetString(PyExc_TypeError, "count_kernels: not_names must be strings");
            return NULL;
        }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), wlen = PyUnicode_GET_LENGTH(word), count = 0;
    Py_ssize_t *sp_start = NULL, *sp_end = NULL;
    Py_ssize_t nspans = read_spans(spans, &sp_start, &sp_end);
    if (nspans < 0) return NULL;
    PyObject *result = NULL;
    Py_ssize_t pos = 0;
    while (wlen && pos <= n - wlen) {
        Py_ssize_t s = PyUnicode_Find(text, word, pos, n, 1);
        if (s == -2) goto done;
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
    result = PyLong_FromSsize_t(count);
done:
    PyMem_Free(sp_start);
    PyMem_Free(sp_end);
    return result;
}

/* hazards/common.py's candidate list: the spans `finditer` gives for the pattern
 * `w1|w2|...|wn(?!\w)` (the words in the order given; the look-ahead binds to the last one
 * only, as the alternation reads), less those with a word character just before. Each word's
 * next occurrence is found with the string search and kept until the scan passes it; at a
 * position where several occur the first in order is the match, as the alternation tries them.
 * A new list of (start, end) tuples, or NULL with an exception. */
static PyObject *qualifier_spans(PyObject *text, PyObject *words) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), nw = PyTuple_GET_SIZE(words), pos = 0;
    Py_ssize_t *next = PyMem_Malloc((size_t)(nw ? nw : 1) * sizeof(Py_ssize_t));
    PyObject *out = PyList_New(0);
    if (!next || !out) {
        PyMem_Free(next);
        Py_XDECREF(out);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t k = 0; k < nw; k++) {
        PyObject *w = PyTuple_GET_ITEM(words, k);
        if (!PyUnicode_Check(w) || PyUnicode_GET_LENGTH(w) == 0) {
            PyErr_SetString(PyExc_ValueError, "definitions: each qualifier word must be a non-empty str");
            goto fail;
        }
        next[k] = -2;  /* not looked for yet */
    }
    for (;;) {
        Py_ssize_t best = -1, best_k = -1;
        for (Py_ssize_t k = 0; k < nw; k++) {
            if (next[k] == -1) continue;  /* no occurrence left */
            PyObject *w = PyTuple_GET_ITEM(words, k);
            Py_ssize_t len = PyUnicode_GET_LENGTH(w);
            if (next[k] < pos) {
                Py_ssize_t at = PyUnicode_Find(text, w, pos, n, 1);
                while (at >= 0 && k == nw - 1 && at + len < n && word_char(READ(at + len)))
                    at = PyUnicode_Find(text, w, at + 1, n, 1);  /* the look-ahead failed there */
                if (at == -2) goto fail;
                next[k] = at;
                if (at < 0) continue;
            }
            if (best < 0 || next[k] < best) {
                best = next[k];
                best_k = k;
            }
        }
        if (best < 0) break;
        Py_ssize_t end = best + PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(words, best_k));
        if (!(best > 0 && word_char(READ(best - 1)))) {
            PyObject *span = Py_BuildValue("(nn)", best, end);
            if (!span || PyList_Append(out, span) < 0) {
                Py_XDECREF(span);
                goto fail;
            }
            Py_DECREF(span);
        }
        pos = end;
    }
    PyMem_Free(next);
    return out;
fail:
    PyMem_Free(next);
    Py_DECREF(out);
    return NULL;
}

static PyObject *claunch_qualifier_spans(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *words;
    if (!PyArg_ParseTuple(args, "UO!:qualifier_spans", &text, &PyTuple_Type, &words)) return NULL;
    return qualifier_spans(text, words);
}

static PyObject *claunch_definitions(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *spans, *candidates, *kernel_words = NULL;
    if (!PyArg_ParseTuple(args, "UOO|O!:definitions", &text, &spans, &candidates, &PyTuple_Type, &kernel_words))
        return NULL;
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
    if (PyTuple_Check(candidates) && PyTuple_GET_SIZE(candidates) && PyUnicode_Check(PyTuple_GET_ITEM(candidates, 0))) {
        seq = qualifier_spans(text, candidates);  /* the qualifier words: their spans found here */
    } else {
        seq = PySequence_Fast(candidates, "definitions: candidates must be a sequence");
    }
    if (!seq) goto done;
    Py_ssize_t last_end = -1, stop_at = -1, stop_from = -1, body_at = -1, body_from = -1;
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(seq); k++) {
        Py_ssize_t start, end;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, k), "nn:definitions", &start, &end)) goto done;
        if (start < 0 || end < start || end > n) {  /* the text is read from `end` on */
            PyErr_SetString(PyExc_IndexError, "definitions: a candidate span outside the text");
            goto done;
        }
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
        if (kernel_words) {  /* the function list's row: start, body, end, name span, is-kernel */
            Py_ssize_t ns = -1, ne = -1, is_kernel = 0;
            name_before(kind, data, end, paren, &ns, &ne);
            for (Py_ssize_t w = 0; w < PyTuple_GET_SIZE(kernel_words) && !is_kernel; w++) {
                Py_ssize_t at = PyUnicode_Find(text, PyTuple_GET_ITEM(kernel_words, w), start, paren, 1);
                if (at == -2) goto done;
                is_kernel = at >= 0;
            }
            Py_ssize_t row6[6] = {start, brace, shut + 1, ns, ne, is_kernel};
            for (int v = 0; v < 6; v++) {
                PyObject *x = PyLong_FromSsize_t(row6[v]);
                if (!x || PyList_Append(out, x) < 0) {
                    Py_XDECREF(x);
                    goto done;
                }
                Py_DECREF(x);
            }
        } else {
            if (append_row5(out, start, end, paren, brace, shut + 1) < 0) goto done;
        }
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

/* --- pairs(text, spans, opener): every code bracket of one kind paired, for CodeMap.closing ---
 * The openers `opener` (one of "({[") in code, in order, and for each the offset of the closer
 * of the same kind that closes it (-1: never closed), as two bytes objects of native 64-bit
 * integers. Brackets of other kinds are not counted, and a closer with no opener open is passed
 * over: the answer for each opener is what `CodeMap.closing` finds scanning from it. */
static PyObject *claunch_pairs(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *spans;
    int opener;
    if (!PyArg_ParseTuple(args, "UOC:pairs", &text, &spans, &opener)) return NULL;
    Py_UCS4 closer = opener == '(' ? ')' : opener == '{' ? '}' : opener == '[' ? ']' : 0;
    if (!closer) {
        PyErr_SetString(PyExc_ValueError, "pairs: the opener must be one of '({['");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_ssize_t *sp_start = NULL, *sp_end = NULL, *stack = NULL, stack_cap = 0, depth = 0, count = 0, cap = 0;
    int64_t *open = NULL, *close = NULL;
    PyObject *result = NULL;
    Py_ssize_t nspans = read_spans(spans, &sp_start, &sp_end);
    if (nspans < 0) return NULL;
    for (Py_ssize_t i = 0, j = 0; i < n; i++) {
        Py_UCS4 c = READ(i);
        if (c != (Py_UCS4)opener && c != closer) continue;
        while (j < nspans && sp_end[j] <= i) j++;
        if (j < nspans && sp_start[j] <= i) continue;  /* in a comment or literal */
        if (c == closer) {
            if (depth) close[stack[--depth]] = i;
            continue;
        }
        Py_ssize_t was = cap;
        if (grow((void **)&open, &cap, count + 1, sizeof(int64_t)) < 0) goto done;
        if (cap != was) {
            int64_t *more = PyMem_Realloc(close, (size_t)cap * sizeof(int64_t));
            if (!more) {
                PyErr_NoMemory();
                goto done;
            }
            close = more;
        }
        if (grow((void **)&stack, &stack_cap, depth + 1, sizeof(Py_ssize_t)) < 0) goto done;
        open[count] = i;
        close[count] = -1;
        stack[depth++] = count++;
    }
    result = Py_BuildValue("(y#y#)", open ? (const char *)open : "", count * (Py_ssize_t)sizeof(int64_t),
                           close ? (const char *)close : "", count * (Py_ssize_t)sizeof(int64_t));
done:
    PyMem_Free(sp_start);
    PyMem_Free(sp_end);
    PyMem_Free(stack);
    PyMem_Free(open);
    PyMem_Free(close);
    return result;
}

/* _claunch_shape.c */
PyObject *musify_claunch_launch_shape(PyObject *self, PyObject *args);
/* _claunch_literals.c */
PyObject *musify_claunch_literals_in(PyObject *self, PyObject *args);
/* _claunch_warp.c */
PyObject *musify_claunch_warp_marks(PyObject *self, PyObject *args);

static PyMethodDef methods[] = {
    {"structure", claunch_structure, METH_VARARGS,
     "structure(text, spans) -> (closer, semicolon, config_end): launches._structure_python in C"},
    {"launches", claunch_launches, METH_VARARGS,
     "launches(text, spans) -> [(kernel start, '<<<', '>>>', '(', ')')]: launches.launch_spans_python in C"},
    {"definitions", claunch_definitions, METH_VARARGS,
     "definitions(text, spans, candidates[, kernel_words]) -> [(start, end, paren, brace, close)], or with\n"
     "kernel_words the function list's flat rows (start, body, end, name start, name end, is-kernel);\n"
     "candidates: the qualifiers' spans, or a tuple of the qualifier words in the pattern's order"},
    {"qualifier_spans", claunch_qualifier_spans, METH_VARARGS,
     "qualifier_spans(text, words) -> [(start, end)]: the qualifier candidates definitions finds for a tuple of\n"
     "words (hazards/common.py's pattern search and filter in C)"},
    {"count_kernels", claunch_count_kernels, METH_VARARGS,
     "count_kernels(text, spans, word, not_names) -> int: launches.count_kernel_defs in C"},
    {"pairs", claunch_pairs, METH_VARARGS,
     "pairs(text, spans, opener) -> (openers, closers): every code bracket of one kind paired, as\n"
     "native 64-bit integers (closer -1: never closed); CodeMap.closing's answers for the whole text"},
    {"launch_shape", musify_claunch_launch_shape, METH_VARARGS,
     "launch_shape(text, start, end, reserved) -> bool: launch_shape.well_formed_python in C"},
    {"literals_in", musify_claunch_literals_in, METH_VARARGS,
     "literals_in(text, words) -> int | None: bit i set when words[i] occurs in text (None: text not one byte\n"
     "a character); literals.holds for every registered word in one pass"},
    {"warp_marks", musify_claunch_warp_marks, METH_VARARGS,
     "warp_marks(text, start, end) -> int: 1 when the warp-size triggers match in text[start:end], else 2 when a\n"
     "standalone 16 does, else 0; warp_precheck.marks_python in C"},
    {"kernel_start", claunch_kernel_start, METH_VARARGS,
     "kernel_start(text, lt) -> int: launches._kernel_start in C"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_claunch", "Launch detection's bracket pass in C.", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__claunch(void) { return PyModule_Create(&module); }
