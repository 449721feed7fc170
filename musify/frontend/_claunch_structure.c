/* Launch detection's bracket pass (`structure`) and the launch list built on it (`launches`); part
 * of the _claunch extension (_claunch.c). */
#include "_claunch.h"

typedef struct {
    Py_ssize_t opener;    /* offset of the opening bracket */
    Py_ssize_t outer;     /* where the '<<<' pending outside it start in `lts` */
    int asked;            /* a '(' directly after a '>>>': an argument list */
} Frame;

enum { T_NONE, T_LT, T_GT, T_OPEN, T_PAREN, T_CLOSE, T_SEMI };

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

/* the characters a token of the bracket pass starts with (`<`, `>`, brackets, `;`): the others
 * are passed over with one table read rather than the switch below (the pass reads every
 * character of a file with a launch: most of the structure pass's time on small files) */
static const unsigned char BRACKET_PASS_CHAR[128] = {
    ['<'] = 1, ['>'] = 1, ['('] = 1, ['['] = 1, ['{'] = 1, [')'] = 1, [']'] = 1, ['}'] = 1, [';'] = 1};

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* the first offset at or after `i` in the one-byte text `s` holding a character of
 * BRACKET_PASS_CHAR (`n` where none does): 16 bytes at a time where SSE2 is there (the test per
 * character was most of the pass on files of launches) */
static inline Py_ssize_t next_bracket_char(const Py_UCS1 *s, Py_ssize_t n, Py_ssize_t i) {
#if defined(__SSE2__)
    /* '(' and ')' differ in the lowest bit only, '<' and '>' in the next: one comparison each pair
     * after masking that bit off (nothing else then compares equal) */
    const __m128i low = _mm_set1_epi8((char)~1), mid = _mm_set1_epi8((char)~2), paren = _mm_set1_epi8('('),
                  angle = _mm_set1_epi8('<'), square = _mm_set1_epi8('['), unsquare = _mm_set1_epi8(']'),
                  brace = _mm_set1_epi8('{'), unbrace = _mm_set1_epi8('}'), semi = _mm_set1_epi8(';');
    for (; i + 16 <= n; i += 16) {
        __m128i block = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(_mm_and_si128(block, low), paren),
                                   _mm_cmpeq_epi8(_mm_and_si128(block, mid), angle));
        hit = _mm_or_si128(hit, _mm_or_si128(_mm_cmpeq_epi8(block, square), _mm_cmpeq_epi8(block, unsquare)));
        hit = _mm_or_si128(hit, _mm_or_si128(_mm_cmpeq_epi8(block, brace), _mm_cmpeq_epi8(block, unbrace)));
        hit = _mm_or_si128(hit, _mm_cmpeq_epi8(block, semi));
        unsigned lanes = (unsigned)_mm_movemask_epi8(hit);
        if (lanes) return i + __builtin_ctz(lanes);
    }
#endif
    while (i < n && (s[i] >= 128 || !BRACKET_PASS_CHAR[s[i]])) i++;
    return i;
}

/* the next token of the bracket pass at or after `*at` that starts in code (T_NONE: none): `*at`
 * is set to where it starts and `*len` to its length; `*j` is the first span that does not end at
 * or before it, kept by the caller from one token to the next (the spans are read in order) */
static ALWAYS_INLINE int next_token(int kind, const void *data, Py_ssize_t n, const Py_ssize_t *sp_start,
                                    const Py_ssize_t *sp_end, Py_ssize_t nspans, Py_ssize_t *j, Py_ssize_t *at,
                                    int *len) {
    for (Py_ssize_t i = *at; i < n;) {
        if (kind == PyUnicode_1BYTE_KIND && (i = next_bracket_char(data, n, i)) >= n) break;
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c >= 128 || !BRACKET_PASS_CHAR[c]) {  /* most characters: no token starts here */
            i++;
            continue;
        }
        int tok = T_NONE, l = 1;
        switch (c) {
        case '<':
        case '>':
            if (i + 2 < n && PyUnicode_READ(kind, data, i + 1) == c && PyUnicode_READ(kind, data, i + 2) == c) {
                tok = c == '<' ? T_LT : T_GT;
                l = 3;
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
        while (*j < nspans && sp_end[*j] <= i) (*j)++;
        if (*j < nspans && sp_start[*j] <= i) {  /* starts in a comment or literal */
            i += l;
            continue;
        }
        *at = i;
        *len = l;
        return tok;
    }
    *at = n;
    return T_NONE;
}

static ALWAYS_INLINE int shape_of_kind(int kind, const void *data, Py_ssize_t n, const Py_ssize_t *sp_start,
                                       const Py_ssize_t *sp_end, Py_ssize_t nspans, Shape *out) {
    Py_ssize_t *pending = NULL;  /* indices into out->lt of the '<<<' still looking for their '>>>' */
    Frame *stack = NULL;
    Py_ssize_t pending_cap = 0, stack_cap = 0, top = 0, base = 0, depth = 0;
    int r = -1, tok, len;
    Py_ssize_t j = 0, after_config = -1, i = 0;
    for (; (tok = next_token(kind, data, n, sp_start, sp_end, nspans, &j, &i, &len)) != T_NONE; i += len) {
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

PyObject *claunch_structure(PyObject *Py_UNUSED(self), PyObject *args) {
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

/* the index of the first span that does not end at or before `pos` (`nspans`: none) */
static Py_ssize_t span_from(const Py_ssize_t *sp_end, Py_ssize_t nspans, Py_ssize_t pos) {
    Py_ssize_t lo = 0, hi = nspans;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (sp_end[mid] <= pos) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* What the launch loop asks of the bracket pass, answered by reading forward from the one '<<<' or
 * '(' asked about: the bracket pass's answer for it depends only on the code tokens after it (a
 * '<<<' is ended by the first '>>>', ';' or unmatched closer outside the brackets opened after it;
 * an argument list by its matching closer, unless a ';' stands directly inside it), and the tokens
 * read from a token's end are those the whole pass reads there. On a file of a few launches this
 * reads the launches, not the file. Where the reads have added up to more than the text (a file of
 * '<<<' never ended), the whole pass is made once and answers the rest: linear either way. */
typedef struct {
    int kind;
    const void *data;
    Py_ssize_t n;
    const Py_ssize_t *sp_start, *sp_end;
    Py_ssize_t nspans;
    Py_ssize_t budget;  /* characters the forward reads may still take */
    int whole;          /* 1: `shape` is made and answers */
    Shape shape;
} Finder;

/* a forward read from `i`: `launch` 1 for a '<<<' (the offset of its '>>>', or -1), 0 for an
 * argument list's '(' (the offset of its closer, or -1: never closed, or a ';' directly inside) */
static ALWAYS_INLINE Py_ssize_t read_forward_kind(int kind, const void *data, Py_ssize_t n,
                                                  const Py_ssize_t *sp_start, const Py_ssize_t *sp_end,
                                                  Py_ssize_t nspans, Py_ssize_t i, int launch, Py_ssize_t *stop) {
    Py_ssize_t j = span_from(sp_end, nspans, i), depth = 0, answer = -1;
    int tok, len;
    for (; (tok = next_token(kind, data, n, sp_start, sp_end, nspans, &j, &i, &len)) != T_NONE; i += len) {
        if (tok == T_LT || (tok == T_GT && (depth || !launch))) continue;
        if (tok == T_OPEN || tok == T_PAREN) {
            depth++;
        } else if (depth) {  /* a ';' or '>>>' inside a nested bracket, or its closer */
            depth -= tok == T_CLOSE;
        } else {
            answer = (launch ? tok == T_GT : tok == T_CLOSE) ? i : -1;
            break;
        }
    }
    *stop = i;
    return answer;
}

static Py_ssize_t read_forward(const Finder *f, Py_ssize_t i, int launch, Py_ssize_t *stop) {
    int kind = f->kind;
    return BY_KIND(read_forward_kind, f->data, f->n, f->sp_start, f->sp_end, f->nspans, i, launch, stop);
}

/* the bracket pass's answer for the code '<<<' at `at` (launch 1: its '>>>') or the argument
 * list's '(' at `at` (launch 0: its closer, -1 also where a ';' stands directly inside); -2: an
 * error was raised */
static Py_ssize_t ask(Finder *f, Py_ssize_t at, int launch) {
    if (!f->whole && f->budget >= 0) {
        Py_ssize_t stop, answer = read_forward(f, at + (launch ? 3 : 1), launch, &stop);
        f->budget -= stop - at;
        if (f->budget >= 0) return answer;  /* else: the last read is answered again below */
    }
    if (!f->whole) {
        if (shape_of(f->kind, f->data, f->n, f->sp_start, f->sp_end, f->nspans, &f->shape) < 0) return -2;
        f->whole = 1;
    }
    const Shape *s = &f->shape;
    if (launch) {
        Py_ssize_t k = find_sorted(s->lt, s->nlt, at);
        return k >= 0 ? s->lt_end[k] : -1;
    }
    Py_ssize_t o = find_sorted(s->op, s->nop, at);
    return o >= 0 && !s->op_semi[o] ? s->op_close[o] : -1;
}

/* the launch rows (kernel start, '<<<', '>>>', '(', ')') of `text`, five offsets a row in
 * `rows->at` (-1: an error was raised): launches.launch_spans_python in C, its loop over the
 * text's '<<<' answered by `ask`; no Python object is made (the structure pass mostly only
 * counts them) */
typedef struct {
    Py_ssize_t *at, n, cap;  /* n rows, cap offsets */
} Rows;

static int launch_rows(PyObject *text, const Py_ssize_t *sp_start, const Py_ssize_t *sp_end, Py_ssize_t nspans,
                       Rows *rows) {
    int kind = PyUnicode_KIND(text), r = -1;
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Finder f = {kind, data, n, sp_start, sp_end, nspans, n, 0, {0}};
    for (Py_ssize_t pos = 0; pos + 3 <= n;) {  /* no "<<<" at all: no bracket read (a file of kernels) */
        Py_ssize_t lt = find_launch_open(kind, data, n, pos);  /* text.find("<<<", pos), as the Python loops */
        if (lt + 3 > n) break;
        pos = lt + 3;
        /* each '<<<' found here is where the bracket pass reads one (the finds start at a token's
         * end), so one in code is a token of it */
        if (span_at(sp_start, sp_end, nspans, lt) >= 0) continue;
        Py_ssize_t gt = ask(&f, lt, 1);
        if (gt == -2) goto done;
        if (gt < 0) continue;
        Py_ssize_t a = gt + 3;
        while (a < n && blank(PyUnicode_READ(kind, data, a))) a++;
        if (a >= n || PyUnicode_READ(kind, data, a) != '(') continue;  /* the token after '>>>': asked */
        Py_ssize_t close = ask(&f, a, 0);
        if (close == -2) goto done;
        if (close < 0) continue;
        Py_ssize_t start = kernel_start(kind, data, n, lt);
        if (start < 0) continue;
        if (grow((void **)&rows->at, &rows->cap, 5 * (rows->n + 1), sizeof(Py_ssize_t)) < 0) goto done;
        Py_ssize_t *row = rows->at + 5 * rows->n++;
        row[0] = start;
        row[1] = lt;
        row[2] = gt;
        row[3] = a;
        row[4] = close;
        pos = close + 1;
    }
    r = 0;
done:
    shape_free(&f.shape);
    return r;
}

/* the rows as the list of 5-tuples `launches` answers (NULL: an error was raised) */
static PyObject *rows_list(const Rows *rows) {
    PyObject *out = PyList_New(0);
    for (Py_ssize_t k = 0; out && k < rows->n; k++) {
        const Py_ssize_t *row = rows->at + 5 * k;
        if (append_row5(out, row[0], row[1], row[2], row[3], row[4]) < 0) Py_CLEAR(out);
    }
    return out;
}

/* launches(text, spans) -> [(kernel start, '<<<', '>>>', '(', ')')] */
PyObject *claunch_launches(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *spans;
    if (!PyArg_ParseTuple(args, "UO:launches", &text, &spans)) return NULL;
    Py_ssize_t *sp_start = NULL, *sp_end = NULL;
    Py_ssize_t nspans = read_spans(spans, &sp_start, &sp_end);
    if (nspans < 0) return NULL;
    Rows rows = {NULL, 0, 0};
    PyObject *result = launch_rows(text, sp_start, sp_end, nspans, &rows) < 0 ? NULL : rows_list(&rows);
    PyMem_Free(rows.at);
    PyMem_Free(sp_start);
    PyMem_Free(sp_end);
    return result;
}

/* structure_counts(text, spans, word, not_names, reserved) -> (kernels, launches): the structure
 * pass's facts in one call (launches.structure_counts_python is the reference): the kernel count
 * of `count_kernels`, and the launch rows of `launches`, or only their number when `launch_shape`
 * reads each as a plain launch (tree-sitter then parses none of them, and no row is made). The
 * spans are read once. `reserved` None (the words not made yet): the rows whenever there is one. */
PyObject *claunch_structure_counts(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *spans, *word, *not_names, *reserved;
    if (!PyArg_ParseTuple(args, "UOUO!O:structure_counts", &text, &spans, &word, &PyTuple_Type, &not_names,
                          &reserved))
        return NULL;
    if (reserved != Py_None && !PyAnySet_Check(reserved)) {
        PyErr_SetString(PyExc_TypeError, "structure_counts: reserved must be a set or None");
        return NULL;
    }
    Py_ssize_t *sp_start = NULL, *sp_end = NULL;
    Py_ssize_t nspans = read_spans(spans, &sp_start, &sp_end);
    if (nspans < 0) return NULL;
    Rows rows = {NULL, 0, 0};
    PyObject *result = NULL, *list = NULL;
    Py_ssize_t kernels = count_kernel_defs(text, sp_start, sp_end, nspans, word, not_names);
    if (kernels < 0 || launch_rows(text, sp_start, sp_end, nspans, &rows) < 0) goto done;
    Py_ssize_t plain = 0;
    for (; plain < rows.n && reserved != Py_None; plain++) {
        const Py_ssize_t *row = rows.at + 5 * plain;
        int ok = launch_well_formed(text, row[0], row[4] + 1, reserved);
        if (ok < 0) goto done;
        if (!ok) break;
    }
    if (plain == rows.n) {
        result = Py_BuildValue("(nn)", kernels, rows.n);
    } else if ((list = rows_list(&rows))) {
        result = Py_BuildValue("(nO)", kernels, list);
        Py_DECREF(list);
    }
done:
    PyMem_Free(rows.at);
    PyMem_Free(sp_start);
    PyMem_Free(sp_end);
    return result;
}
