/* The device-function search (`definitions`, `qualifier_spans`) and the bracket pairing for
 * CodeMap.closing (`pairs`); part of the _claunch extension (_claunch.c). */
#include "_claunch.h"

/* --- definitions(text, spans, candidates): the search of hazards/common.py `device_functions` ---
 * `candidates` are the (start, end) of the qualifier words, in order; for each one in code that
 * starts at or after the end of the last definition found, `_definition_after` is answered: the
 * first code character of `;=[(` after it must be '(', whose closing ')' (parentheses only,
 * code only) is followed, at the first code ';' or '{', by a '{' that closes too (braces only).
 * The answer per definition is (start, end of the qualifier, '(', '{', just after '}'). Each
 * closer is found by reading on from its opener (`scan_closer`) until that has read twice the
 * text; then both bracket kinds are paired in one pass over the code, and each search
 * for the next stop character reuses the last answer while it still lies ahead, so the whole
 * call is linear in the text however many qualifiers there are. */

typedef struct {
    Py_ssize_t *open, *close;  /* opener offsets in order and their closers (-1: never closed) */
    Py_ssize_t n, cap;
} Pairs;

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

/* The closer of the code opener at `pos`, found by reading on from it: the first closer of its
 * kind (code only) at which the count of openers and closers after it comes back to zero, which is
 * the closer the pairing of the whole text gives it (the brackets before `pos` do not change which
 * closer ends it), or -1 where none does. A file's definitions are a small part of it, so reading
 * from each one's '(' and '{' to their closers reads far less than pairing every bracket of the
 * file (most of `definitions`' time on small files). `*budget` is what may still be read: -2 when
 * it runs out, and the caller pairs the whole text once instead, so the call stays linear in the
 * text however many qualifiers fail to close. */
static ALWAYS_INLINE Py_ssize_t scan_closer_kind(int kind, const void *data, Py_ssize_t n, const Py_ssize_t *starts,
                                                 const Py_ssize_t *ends, Py_ssize_t nspans, Py_ssize_t pos,
                                                 Py_UCS4 open, Py_UCS4 close, Py_ssize_t *budget) {
    Py_ssize_t lo = 0, hi = nspans;  /* the first span ending after pos */
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (ends[mid] <= pos) lo = mid + 1;
        else hi = mid;
    }
    Py_ssize_t j = lo, depth = 1, i = pos + 1, stop = n - pos - 1 > *budget ? pos + 1 + *budget : n;
    for (; i < stop; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c != open && c != close) continue;
        while (j < nspans && ends[j] <= i) j++;
        if (j < nspans && starts[j] <= i) continue;  /* in a comment or literal */
        if (c == open) depth++;
        else if (--depth == 0) break;
    }
    *budget -= i - pos;
    if (i < n && depth == 0) return i;
    return i >= n ? -1 : -2;
}

static Py_ssize_t scan_closer(int kind, const void *data, Py_ssize_t n, const Py_ssize_t *starts, const Py_ssize_t *ends,
                              Py_ssize_t nspans, Py_ssize_t pos, Py_UCS4 open, Py_UCS4 close, Py_ssize_t *budget) {
    return BY_KIND(scan_closer_kind, data, n, starts, ends, nspans, pos, open, close, budget);
}

/* `hazards/common.py _NAME_BEFORE_PAREN.search(text, lo, hi)`, the regex
 * `([A-Za-z_]\w*)\s*(?:<[^;{()]*>\s*)?$`: the leftmost start whose word run, blanks and optional
 * template arguments reach `hi` (a `$` before a final newline is reached the same way, the
 * newline being a blank). Sets the name's span; 0 when there is none. */
static int name_before(int kind, const void *data, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t *ns, Py_ssize_t *ne) {
    for (Py_ssize_t p = lo; p < hi; p++) {
        if (!ascii_ident_start(READ(p))) continue;
        Py_ssize_t q, t = name_and_blanks(kind, data, p, hi, &q);
        if (t == hi || (READ(t) == '<' && template_args_to(kind, data, t, hi))) {
            *ns = p;
            *ne = q;
            return 1;
        }
    }
    return 0;
}

/* hazards/common.py's candidate list: the spans `finditer` gives for the pattern
 * `w1|w2|...|wn(?!\w)` (the words in the order given; the look-ahead binds to the last one
 * only, as the alternation reads), less those with a word character just before. Each word's
 * next occurrence is found with the string search and kept until the scan passes it; at a
 * position where several occur the first in order is the match, as the alternation tries them.
 * A new list of (start, end) tuples, or NULL with an exception. */
#if defined(__SSE2__)
#include <emmintrin.h>

/* the first `w` (m > 1 bytes) in the n bytes at h, or -1: sixteen places tested at once on three
 * of its bytes, its first, the first and the last that differ from it (the qualifier words start
 * and end with "__", which most places with a '_' pass), each place that passes compared whole.
 * glibc's memmem read these texts at several instructions a byte. */
static Py_ssize_t find_bytes(const unsigned char *h, Py_ssize_t n, const unsigned char *w, Py_ssize_t m) {
    Py_ssize_t j = 1, k = m - 1;
    while (k > 0 && w[k] == w[0]) k--;
    if (k == 0) k = m - 1;  /* the one byte repeated: its first and last places */
    while (j < k && w[j] == w[0]) j++;
    const __m128i a = _mm_set1_epi8((char)w[0]), b = _mm_set1_epi8((char)w[j]), c = _mm_set1_epi8((char)w[k]);
    Py_ssize_t i = 0;
    for (; i + k + 16 <= n; i += 16) {
        __m128i eq = _mm_and_si128(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(h + i)), a),
                                   _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(h + i + k)), c));
        unsigned mask = (unsigned)_mm_movemask_epi8(eq);
        if (!mask) continue;
        mask &= (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(h + i + j)), b));
        while (mask) {
            Py_ssize_t at = i + __builtin_ctz(mask), x = 0;
            if (at + m > n) return -1;  /* every later place too */
            while (x < m && h[at + x] == w[x]) x++;
            if (x == m) return at;
            mask &= mask - 1;
        }
    }
    for (; i + m <= n; i++)
        if (h[i] == w[0] && memcmp(h + i, w, (size_t)m) == 0) return i;
    return -1;
}
#endif

/* text.find(w, from) where both are one byte a character: `find_bytes` (SSE2), else glibc's
 * memmem (the qualifier search's PyUnicode_Find calls, each with its argument checks and slice
 * set-up, were a third of a small file's search); else PyUnicode_Find; -2 with an exception as
 * it gives. Shared with count_kernel_defs (_claunch.h). */
Py_ssize_t claunch_find_from(PyObject *text, PyObject *w, Py_ssize_t from, Py_ssize_t n) {
    if (PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND && PyUnicode_KIND(w) == PyUnicode_1BYTE_KIND && from <= n) {
        const char *data = (const char *)PyUnicode_DATA(text);
        Py_ssize_t m = PyUnicode_GET_LENGTH(w);
#if defined(__SSE2__)
        if (m > 1) {
            Py_ssize_t at = find_bytes((const unsigned char *)data + from, n - from, PyUnicode_DATA(w), m);
            return at < 0 ? -1 : from + at;
        }
#endif
        const char *at = memmem(data + from, (size_t)(n - from), PyUnicode_DATA(w), (size_t)m);
        return at ? at - data : -1;
    }
    return PyUnicode_Find(text, w, from, n, 1);
}

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
                Py_ssize_t at = claunch_find_from(text, w, pos, n);
                while (at >= 0 && k == nw - 1 && at + len < n && word_char(READ(at + len)))
                    at = claunch_find_from(text, w, at + 1, n);  /* the look-ahead failed there */
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

PyObject *claunch_qualifier_spans(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *words;
    if (!PyArg_ParseTuple(args, "UO!:qualifier_spans", &text, &PyTuple_Type, &words)) return NULL;
    return qualifier_spans(text, words);
}

PyObject *claunch_definitions(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *spans, *candidates, *kernel_words = NULL;
    if (!PyArg_ParseTuple(args, "UOO|O!:definitions", &text, &spans, &candidates, &PyTuple_Type, &kernel_words))
        return NULL;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_ssize_t *sp_start = NULL, *sp_end = NULL;
    Pairs pairs[2] = {{NULL, NULL, 0, 0}, {NULL, NULL, 0, 0}};
    int paired = 0;
    Py_ssize_t budget = 2 * n + 64;  /* what `scan_closer` may read in all before the text is paired */
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
        Py_ssize_t close = paired ? -2 : scan_closer(kind, data, n, sp_start, sp_end, nspans, paren, '(', ')', &budget);
        if (close == -2 && !paired) {  /* read too much already: every bracket paired once */
            if (pair_brackets(kind, data, n, sp_start, sp_end, nspans, pairs) < 0) goto done;
            paired = 1;
        }
        if (paired) close = closer_of(&pairs[0], paren);
        if (close < 0) continue;
        if (body_from < 0 || close + 1 < body_from || (body_at >= 0 && close + 1 > body_at)) {
            body_at = code_search(kind, data, n, sp_start, sp_end, nspans, close + 1, ";{");
            body_from = close + 1;
        }
        Py_ssize_t brace = body_at;
        if (brace < 0 || PyUnicode_READ(kind, data, brace) == ';') continue;
        Py_ssize_t shut = paired ? -2 : scan_closer(kind, data, n, sp_start, sp_end, nspans, brace, '{', '}', &budget);
        if (shut == -2 && !paired) {
            if (pair_brackets(kind, data, n, sp_start, sp_end, nspans, pairs) < 0) goto done;
            paired = 1;
        }
        if (paired) shut = closer_of(&pairs[1], brace);
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
PyObject *claunch_pairs(PyObject *Py_UNUSED(self), PyObject *args) {
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
