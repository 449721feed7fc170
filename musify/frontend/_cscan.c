/* The scanner's hot path in C: the same two passes as musify/frontend/scanner.py (`_lex` and
 * `_label_identifiers`), character for character, returning the same Python objects.
 *
 * Why C: the pure-Python scanner spends its time in per-token interpreter work (a regex call per
 * comment, literal and directive, a loop iteration per candidate identifier). Here each
 * character of the file is looked at a bounded number of times in a plain loop.
 *
 * The semantics are those of the Python code, including its regular expressions' Unicode rules
 * (`\w` is Py_UNICODE_ISALNUM or '_', `\s` is Py_UNICODE_ISSPACE); a property test
 * (tests/test_cscan_equivalence.py) checks both give identical scans on generated inputs.
 * It knows no CUDA name: the candidate prefixes are an argument.
 *
 * Built by setup.py as an optional extension: without a compiler the Python path runs.
 */
#include "_cscan.h"

/* Types and constants bound once from Python (`bind`). */
static PyObject *IdentType, *IncludeType, *DirectiveType, *ProblemType;
static PyObject *CTX[8];
static PyObject *S_COMMENT, *S_STRING_LIT, *S_CHAR_LIT, *S_RAW_LIT, *S_EMPTY;

enum { C_CODE, C_COMMENT, C_STRING, C_CHAR, C_INCLUDE, C_DIRECTIVE, C_MACRO, C_MACRO_NAME };
enum { K_OTHER, K_INCLUDE, K_DEFINE, K_NAMED, K_MESSAGE };

static ALWAYS_INLINE Py_ssize_t find_char(const Text *t, Py_UCS4 c, Py_ssize_t from) {
    if (t->kind == PyUnicode_1BYTE_KIND) {  /* (each kind has its own copy: this test is folded) */
        if (from >= t->n) return -1;
        const char *d = t->data, *at = memchr(d + from, (int)c, (size_t)(t->n - from));
        return at ? at - d : -1;
    }
    for (Py_ssize_t i = from; i < t->n; i++)
        if (CH(t, i) == c) return i;
    return -1;
}

/* text.find(two-character string, from) */
static ALWAYS_INLINE Py_ssize_t find2(const Text *t, Py_UCS4 a, Py_UCS4 b, Py_ssize_t from) {
    if (t->kind == PyUnicode_1BYTE_KIND) {
        for (Py_ssize_t i = find_char(t, a, from); i >= 0 && i + 1 < t->n; i = find_char(t, a, i + 1))
            if (CH(t, i + 1) == b) return i;
        return -1;
    }
    for (Py_ssize_t i = from; i + 1 < t->n; i++)
        if (CH(t, i) == a && CH(t, i + 1) == b) return i;
    return -1;
}

/* where the first pass stops: a character that may open a comment, a literal or a directive */
static const char LEX_STOPS[] = "/\"'#";

/* the first offset at or after `pos` holding one of LEX_STOPS (t->n: none) */
static ALWAYS_INLINE Py_ssize_t next_stop(const Text *t, Py_ssize_t pos) {
    if (t->kind == PyUnicode_1BYTE_KIND) {  /* the text is NUL-terminated; a NUL inside it is passed over */
        const char *d = t->data;
        while (pos < t->n) {
            pos += (Py_ssize_t)strcspn(d + pos, LEX_STOPS);
            if (pos >= t->n || d[pos]) break;
            pos++;
        }
        return pos < t->n ? pos : t->n;
    }
    while (pos < t->n) {
        Py_UCS4 c = CH(t, pos);
        if (c == '/' || c == '"' || c == '\'' || c == '#') break;
        pos++;
    }
    return pos;
}

/* ---- growable output: Python lists plus the C-side copies the second pass needs ---- */

typedef struct { Py_ssize_t start, end; } Span;
typedef struct { Py_ssize_t start, end, name_start; int kw; int has_name; } Dir;

typedef struct {
    PyObject *includes, *directives, *spans, *problems;
    Span *sp; Py_ssize_t nsp, capsp;
    Dir *dr; Py_ssize_t ndr, capdr;
    Rows idents; /* (start, end, name index, context) a row: an `IdentList`'s array */
    PyObject *names; /* the distinct names in order */
    /* name -> its index, by the name's place in the text (its first use): a name met again is
     * found without making a string and hashing it (most of a file's candidates repeat) */
    struct NameSlot { uint64_t hash; Py_ssize_t start, len, index; } *slots;
    Py_ssize_t nslots, used; /* nslots: a power of two (0 before the first name); used: filled */
} Out;

static int grow(void **buf, Py_ssize_t *cap, Py_ssize_t need, size_t item) {
    if (need <= *cap) return 0;
    Py_ssize_t c = *cap ? *cap * 2 : 64;
    while (c < need) c *= 2;
    void *nb = PyMem_Realloc(*buf, (size_t)c * item);
    if (!nb) { PyErr_NoMemory(); return -1; }
    *buf = nb;
    *cap = c;
    return 0;
}

static int add_span(Out *o, Py_ssize_t s, Py_ssize_t e, int ctx) {
    if (grow((void **)&o->sp, &o->capsp, o->nsp + 1, sizeof(Span)) < 0) return -1;
    o->sp[o->nsp].start = s;
    o->sp[o->nsp].end = e;
    o->nsp++;
    PyObject *items[3] = {PyLong_FromSsize_t(s), PyLong_FromSsize_t(e), Py_NewRef(CTX[ctx])};
    return append_steal(o->spans, make_tuple(NULL, items, 3));
}

static int add_problem(Out *o, Py_ssize_t offset, PyObject *what) {
    return append_steal(o->problems, PyObject_CallFunction(ProblemType, "nO", offset, what));
}

/* ---- the first pass: comments, literals, directives ---- */

/* `(?:[^Q\\\n]|\\(?:\r?\n|.))*(Q)?` from `pos`: returns the end; *closed says whether Q was found */
static ALWAYS_INLINE Py_ssize_t literal_body(const Text *t, Py_ssize_t i, Py_UCS4 q, int *closed) {
    Py_ssize_t n = t->n;
    while (i < n) {
        Py_UCS4 c = CH(t, i);
        if (c == q) { *closed = 1; return i + 1; }
        if (c == '\n') break;
        if (c == '\\') {
            if (i + 1 >= n) break;
            Py_UCS4 d = CH(t, i + 1);
            if (d == '\r' && i + 2 < n && CH(t, i + 2) == '\n') i += 3;
            else if (d == '\n') i += 2;
            else i += 2; /* `.`: anything but a newline, which was handled above */
            continue;
        }
        i++;
    }
    *closed = 0;
    return i;
}

static const char *CHAR_PREFIXES[4] = {"u8", "u", "U", "L"};

static ALWAYS_INLINE int starts_with_ascii(const Text *t, Py_ssize_t at, const char *p) {
    Py_ssize_t len = (Py_ssize_t)strlen(p);
    if (at < 0 || at + len > t->n) return 0;
    for (Py_ssize_t k = 0; k < len; k++)
        if (CH(t, at + k) != (Py_UCS4)(unsigned char)p[k]) return 0;
    return 1;
}

/* `_is_literal_prefix`: the word before a quote is exactly an encoding prefix */
static ALWAYS_INLINE int is_literal_prefix(const Text *t, Py_ssize_t quote) {
    for (int k = 0; k < 4; k++) {
        Py_ssize_t s = quote - (Py_ssize_t)strlen(CHAR_PREFIXES[k]);
        if (s >= 0 && starts_with_ascii(t, s, CHAR_PREFIXES[k]) && (s == 0 || !ascii_word(CH(t, s - 1))))
            return 1;
    }
    return 0;
}

/* `_raw_string_start`: 1 when the quote opens a raw string; sets the literal start and delimiter */
static ALWAYS_INLINE int raw_string_start(const Text *t, Py_ssize_t quote, Py_ssize_t *lit_start, Py_ssize_t *delim_len) {
    if (quote < 1 || CH(t, quote - 1) != 'R') return 0;
    /* R"([^()\\\s"]{0,16})\( */
    Py_ssize_t i = quote + 1, k = 0;
    while (k < 16 && i + k < t->n) {
        Py_UCS4 c = CH(t, i + k);
        if (c == '(' || c == ')' || c == '\\' || c == '"' || Py_UNICODE_ISSPACE(c)) break;
        k++;
    }
    if (i + k >= t->n || CH(t, i + k) != '(') return 0;
    Py_ssize_t s = quote - 1;
    for (int p = 0; p < 4; p++) {
        Py_ssize_t at = s - (Py_ssize_t)strlen(CHAR_PREFIXES[p]);
        if (starts_with_ascii(t, at, CHAR_PREFIXES[p])) { s = at; break; }
    }
    if (s && ascii_word(CH(t, s - 1))) return 0;
    *lit_start = s;
    *delim_len = k;
    return 1;
}

static ALWAYS_INLINE Py_ssize_t logical_line_end(const Text *t, Py_ssize_t pos) {
    for (;;) {
        Py_ssize_t nl = find_char(t, '\n', pos);
        if (nl < 0) return t->n;
        Py_ssize_t j = nl - 1;
        if (j >= 0 && CH(t, j) == '\r') j--;
        if (j >= 0 && CH(t, j) == '\\') { pos = nl + 1; continue; }
        return nl;
    }
}

static ALWAYS_INLINE Py_ssize_t skip_blanks(const Text *t, Py_ssize_t i) {
    while (i < t->n) {
        Py_UCS4 c = CH(t, i);
        if (c != ' ' && c != '\t') break;
        i++;
    }
    return i;
}

static ALWAYS_INLINE int keyword_is(const Text *t, Py_ssize_t s, Py_ssize_t e, const char *w) {
    return e - s == (Py_ssize_t)strlen(w) && starts_with_ascii(t, s, w);
}

/* `_directive`: records the directive at `start`; returns where lexing goes on (or -1 on error) */
static ALWAYS_INLINE Py_ssize_t directive(const Text *t, Py_ssize_t start, Out *o, Py_ssize_t *dir_end) {
    Py_ssize_t i = skip_blanks(t, start + 1), ks = i, ke = i;
    if (i < t->n && ident_start(CH(t, i))) {
        ke = i + 1;
        while (ke < t->n && re_word(CH(t, ke))) ke++;
    }
    Py_ssize_t end = logical_line_end(t, start);
    Py_ssize_t pos = ke, name_s = 0, name_e = 0;
    int kw = K_OTHER, has_name = 0;
    if (keyword_is(t, ks, ke, "include") || keyword_is(t, ks, ke, "include_next") || keyword_is(t, ks, ke, "import")) {
        kw = K_INCLUDE;
        Py_ssize_t p = skip_blanks(t, pos);
        if (p < t->n && (CH(t, p) == '<' || CH(t, p) == '"')) {
            Py_UCS4 close = CH(t, p) == '<' ? '>' : '"';
            Py_ssize_t q = p + 1;
            while (q < t->n && CH(t, q) != close && CH(t, q) != '\n') q++;
            if (q < t->n && CH(t, q) == close) {
                PyObject *items[5] = {PyLong_FromSsize_t(p + 1), PyLong_FromSsize_t(q),
                                      PyUnicode_Substring(t->text, p + 1, q), PyBool_FromLong(close == '>'),
                                      PyLong_FromSsize_t(start)};
                if (append_steal(o->includes, make_tuple(IncludeType, items, 5)) < 0) return -1;
                if (add_span(o, p + 1, q, C_INCLUDE) < 0) return -1;
                pos = q + 1;
            }
        }
    } else if (keyword_is(t, ks, ke, "define") || keyword_is(t, ks, ke, "undef") ||
               keyword_is(t, ks, ke, "ifdef") || keyword_is(t, ks, ke, "ifndef")) {
        kw = keyword_is(t, ks, ke, "define") ? K_DEFINE : K_NAMED;
        Py_ssize_t p = skip_blanks(t, pos);
        if (p < t->n && ident_start(CH(t, p))) {
            name_s = p;
            name_e = p + 1;
            while (name_e < t->n && re_word(CH(t, name_e))) name_e++;
            has_name = 1;
            pos = name_e;
        }
    } else if (keyword_is(t, ks, ke, "error") || keyword_is(t, ks, ke, "warning")) {
        kw = K_MESSAGE;
        if (add_span(o, pos, end, C_STRING) < 0) return -1;
        pos = end;
    }
    if (grow((void **)&o->dr, &o->capdr, o->ndr + 1, sizeof(Dir)) < 0) return -1;
    Dir *d = &o->dr[o->ndr++];
    d->start = start;
    d->end = end;
    d->kw = kw;
    d->has_name = has_name;
    d->name_start = name_s;
    PyObject *items[4] = {PyLong_FromSsize_t(start), PyLong_FromSsize_t(end),
                          PyUnicode_Substring(t->text, ks, ke),
                          has_name ? PyUnicode_Substring(t->text, name_s, name_e) : Py_NewRef(S_EMPTY)};
    if (append_steal(o->directives, make_tuple(DirectiveType, items, 4)) < 0) return -1;
    *dir_end = end;
    return pos;
}

static ALWAYS_INLINE int lex(const Text *t, Out *o) {
    Py_ssize_t n = t->n, pos = 0, directive_end = -1;
    while ((pos = next_stop(t, pos)) < n) {
        Py_UCS4 c = CH(t, pos);
        Py_ssize_t start = pos, end;
        if (c == '/') {
            Py_UCS4 nxt = start + 1 < n ? CH(t, start + 1) : 0;
            if (nxt == '/' && start + 1 < n) {
                end = find_char(t, '\n', start);
                if (end < 0) end = n;
                while (end < n && (CH(t, end - 1) == '\\' || (CH(t, end - 2) == '\\' && CH(t, end - 1) == '\r'))) {
                    Py_ssize_t nl = find_char(t, '\n', end + 1);
                    end = nl < 0 ? n : nl;
                }
                if (add_span(o, start, end, C_COMMENT) < 0) return -1;
                pos = end;
            } else if (nxt == '*' && start + 1 < n) {
                Py_ssize_t close = find2(t, '*', '/', start + 2);
                if (close < 0) {
                    if (add_problem(o, start, S_COMMENT) < 0) return -1;
                    end = n;
                } else end = close + 2;
                if (add_span(o, start, end, C_COMMENT) < 0) return -1;
                pos = end;
            } else pos = start + 1;
        } else if (c == '"') {
            Py_ssize_t lit_start, dlen;
            if (raw_string_start(t, start, &lit_start, &dlen)) {
                /* the closer is ")" + delimiter + '"'; the delimiter is text[start+1 : start+1+dlen] */
                Py_ssize_t from = start + 2 + dlen, close = -1;
                for (Py_ssize_t i = from; i + dlen + 1 < n; i++) {
                    if (CH(t, i) != ')' || CH(t, i + dlen + 1) != '"') continue;
                    Py_ssize_t k = 0;
                    while (k < dlen && CH(t, i + 1 + k) == CH(t, start + 1 + k)) k++;
                    if (k == dlen) { close = i; break; }
                }
                if (close < 0) {
                    if (add_problem(o, lit_start, S_RAW_LIT) < 0) return -1;
                    end = n;
                } else end = close + dlen + 2;
                if (add_span(o, lit_start, end, C_STRING) < 0) return -1;
                pos = end;
                continue;
            }
            int closed;
            end = literal_body(t, start + 1, '"', &closed);
            if (!closed && add_problem(o, start, S_STRING_LIT) < 0) return -1;
            if (add_span(o, start, end, C_STRING) < 0) return -1;
            pos = end;
        } else if (c == '\'') {
            if (start && ascii_word(CH(t, start - 1)) && !is_literal_prefix(t, start)) {
                pos = start + 1; /* a digit separator (1'000'000) */
                continue;
            }
            int closed;
            end = literal_body(t, start + 1, '\'', &closed);
            if (!closed && add_problem(o, start, S_CHAR_LIT) < 0) return -1;
            if (add_span(o, start, end, C_CHAR) < 0) return -1;
            pos = end;
        } else { /* '#': a directive when only blanks (or a BOM) precede it on its line */
            int blank = start >= directive_end;
            for (Py_ssize_t i = start - 1; blank && i >= 0; i--) {
                Py_UCS4 b = CH(t, i);
                if (b == '\n') break;
                if (b != ' ' && b != '\t' && b != 0xFEFF) blank = 0;
            }
            if (!blank) { pos = start + 1; continue; }
            pos = directive(t, start, o, &directive_end);
            if (pos < 0) return -1;
        }
    }
    return 0;
}

/* ---- the second pass: candidate identifiers with their context ---- */

typedef struct {
    /* the prefixes, each ASCII word characters only, bucketed by their first two characters */
    char buf[4096];
    Py_ssize_t off[256], len[256];
    unsigned char head[128];
    unsigned char single[128]; /* 1 when a one-character prefix is this character */
    unsigned char pair[128][128]; /* 1 when some prefix starts with these two characters */
    unsigned char bucket[128][256]; /* prefix indices by first character */
    int nbucket[128];
} Prefixes;

/* 0 when every prefix is ASCII word characters and they fit; -1 otherwise (the caller falls back) */
static int compile_prefixes(PyObject *seq, Prefixes *p) {
    memset(p->head, 0, sizeof p->head);
    memset(p->pair, 0, sizeof p->pair);
    memset(p->single, 0, sizeof p->single);
    memset(p->nbucket, 0, sizeof p->nbucket);
    Py_ssize_t used = 0, n = PyTuple_GET_SIZE(seq);
    if (n > 256) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *s = PyTuple_GET_ITEM(seq, i);
        if (!PyUnicode_Check(s) || !PyUnicode_IS_ASCII(s)) return -1;
        Py_ssize_t len = PyUnicode_GET_LENGTH(s);
        const unsigned char *c = PyUnicode_1BYTE_DATA(s);
        if (len == 0 || used + len > (Py_ssize_t)sizeof p->buf) return -1;
        for (Py_ssize_t k = 0; k < len; k++)
            if (!ASCII_WORD[c[k]]) return -1;
        memcpy(p->buf + used, c, (size_t)len);
        p->off[i] = used;
        p->len[i] = len;
        used += len;
        p->head[c[0]] = 1;
        if (len == 1) p->single[c[0]] = 1;
        else p->pair[c[0]][c[1]] = 1;
        p->bucket[c[0]][p->nbucket[c[0]]++] = (unsigned char)i;
    }
    return 0;
}

/* some prefix starts at i (text[i] is an ASCII head character) */
static ALWAYS_INLINE int prefix_at(const Text *t, const Prefixes *p, Py_ssize_t i) {
    Py_UCS4 c0 = CH(t, i);
    if (p->single[c0]) return 1;
    if (i + 1 < t->n) {
        Py_UCS4 c1 = CH(t, i + 1);
        if (c1 >= 128 || !p->pair[c0][c1]) return 0;
    }
    for (int b = 0; b < p->nbucket[c0]; b++) {
        int k = p->bucket[c0][b];
        Py_ssize_t len = p->len[k];
        if (i + len > t->n) continue;
        const char *s = p->buf + p->off[k];
        Py_ssize_t j = 1;
        while (j < len && CH(t, i + j) == (Py_UCS4)(unsigned char)s[j]) j++;
        if (j == len) return 1;
    }
    return 0;
}

/* the slot of the name hashed `h` that text[start:start+len] spells, or the empty slot it goes in */
static ALWAYS_INLINE struct NameSlot *name_slot(const Text *t, const Out *o, uint64_t h, Py_ssize_t start, Py_ssize_t len) {
    Py_ssize_t mask = o->nslots - 1;
    for (Py_ssize_t k = (Py_ssize_t)(h & (uint64_t)mask);; k = (k + 1) & mask) {
        struct NameSlot *s = &o->slots[k];
        if (s->len < 0) return s;
        if (s->hash != h || s->len != len) continue;
        Py_ssize_t i = 0;
        while (i < len && CH(t, s->start + i) == CH(t, start + i)) i++;
        if (i == len) return s;
    }
}

/* the index of text[start:end] in o->names, appended when new (-1: an error was raised) */
static ALWAYS_INLINE Py_ssize_t intern_name(const Text *t, Out *o, Py_ssize_t start, Py_ssize_t end) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a over the code points */
    for (Py_ssize_t i = start; i < end; i++) h = (h ^ CH(t, i)) * 1099511628211ULL;
    if (2 * (o->used + 1) > o->nslots) { /* keep it at most half full: grow, and place the names again */
        Py_ssize_t n = o->nslots ? o->nslots * 2 : 64;
        struct NameSlot *old = o->slots, *fresh = PyMem_Malloc((size_t)n * sizeof *fresh);
        if (!fresh) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t k = 0; k < n; k++) fresh[k].len = -1;
        Py_ssize_t was = o->nslots;
        o->slots = fresh;
        o->nslots = n;
        for (Py_ssize_t k = 0; k < was; k++)
            if (old[k].len >= 0) *name_slot(t, o, old[k].hash, old[k].start, old[k].len) = old[k];
        PyMem_Free(old);
    }
    struct NameSlot *s = name_slot(t, o, h, start, end - start);
    if (s->len >= 0) return s->index;
    Py_ssize_t index = PyList_GET_SIZE(o->names);
    if (append_steal(o->names, PyUnicode_Substring(t->text, start, end)) < 0) return -1;
    *s = (struct NameSlot){h, start, end - start, index};
    o->used++;
    return index;
}

static ALWAYS_INLINE int add_ident(const Text *t, Out *o, Py_ssize_t start, Py_ssize_t end, Py_ssize_t *si, Py_ssize_t *di) {
    while (*si < o->nsp && o->sp[*si].end <= start) (*si)++;
    if (*si < o->nsp && o->sp[*si].start <= start) return 0; /* in a comment, literal, include path */
    while (*di < o->ndr && o->dr[*di].end <= start) (*di)++;
    int ctx = C_CODE;
    if (*di < o->ndr && o->dr[*di].start <= start) {
        const Dir *d = &o->dr[*di];
        ctx = d->kw == K_DEFINE ? C_MACRO : d->kw == K_INCLUDE ? C_INCLUDE : C_DIRECTIVE;
        if (d->kw == K_DEFINE && d->has_name && d->name_start == start) ctx = C_MACRO_NAME;
    }
    Py_ssize_t name = intern_name(t, o, start, end);
    if (name < 0) return -1;
    Py_ssize_t row[4] = {start, end, name, ctx};
    return rows_push(&o->idents, row, 4);
}

/* `re_word` of each one-byte character: 1 an ASCII word character, 2 another (Latin-1) letter or
 * digit, 0 none (filled when the module is made) */
static unsigned char LATIN1_WORD[256];

/* `finditer` of `(?:PREFIXES)\w*`, keeping matches that do not follow an ASCII word character.
 * A match can only start inside a run of `\w` characters and always ends where the run ends.
 * At the run's first character a match is kept; further in, a match follows a word character
 * and is dropped (and swallows the rest of the run) unless that character is non-ASCII, so
 * only runs with non-ASCII characters need a look at every position. */
static ALWAYS_INLINE int label_identifiers(const Text *t, const Prefixes *p, Out *o) {
    Py_ssize_t n = t->n, i = 0, si = 0, di = 0;
    while (i < n) {
        Py_UCS4 c;
        Py_ssize_t a, b;
        int ascii;
        if (t->kind == PyUnicode_1BYTE_KIND) {  /* a byte's class from one table: the run found in a tight loop */
            const unsigned char *d = t->data;
            while (i < n && !LATIN1_WORD[d[i]]) i++;
            if (i >= n) break;
            unsigned char seen = LATIN1_WORD[d[i]];
            a = i, b = i + 1;
            while (b < n && LATIN1_WORD[d[b]]) seen |= LATIN1_WORD[d[b++]];
            c = d[a];
            ascii = !(seen & 2);
        } else {
            c = CH(t, i);
            if (!re_word(c)) { i++; continue; }
            a = i, b = i + 1;
            ascii = c < 128;
            while (b < n) {
                Py_UCS4 d = CH(t, b);
                if (d < 128) {
                    if (!ASCII_WORD[d]) break;
                } else if (Py_UNICODE_ISALNUM(d)) ascii = 0;
                else break;
                b++;
            }
        }
        i = b;
        if (c < 128 && p->head[c] && prefix_at(t, p, a)) {
            if ((a == 0 || !ascii_word(CH(t, a - 1))) && add_ident(t, o, a, b, &si, &di) < 0) return -1;
            continue;
        }
        if (ascii) continue;
        for (Py_ssize_t j = a + 1; j < b; j++) { /* the exact walk, for runs with non-ASCII letters */
            Py_UCS4 cj = CH(t, j);
            if (cj >= 128 || !p->head[cj] || !prefix_at(t, p, j)) continue;
            if (!ascii_word(CH(t, j - 1)) && add_ident(t, o, j, b, &si, &di) < 0) return -1;
            break;
        }
    }
    return 0;
}

static ALWAYS_INLINE int scan_kind(const Text *src, int kind, const Prefixes *p, Out *o) {
    Text t = *src;
    t.kind = kind;
    return lex(&t, o) == 0 && label_identifiers(&t, p, o) == 0 ? 0 : -1;
}

static int scan_text(const Text *t, const Prefixes *p, Out *o) {
    switch (t->kind) {
    case PyUnicode_1BYTE_KIND: return scan_kind(t, PyUnicode_1BYTE_KIND, p, o);
    case PyUnicode_2BYTE_KIND: return scan_kind(t, PyUnicode_2BYTE_KIND, p, o);
    default: return scan_kind(t, PyUnicode_4BYTE_KIND, p, o);
    }
}

/* scan(text, prefixes) -> (ident rows, row item size, names, includes, directives, spans,
 * problems), or None when the prefixes are not plain ASCII words (the Python scanner handles
 * those). The ident rows are the bytes of an `IdentList`'s array (4 or 8 bytes a value). */
static PyObject *cscan_scan(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *prefixes;
    if (!PyArg_ParseTuple(args, "UO!:scan", &text, &PyTuple_Type, &prefixes)) return NULL;
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) return NULL;
#endif
    if (!IdentType) {
        PyErr_SetString(PyExc_RuntimeError, "_cscan.bind() was not called");
        return NULL;
    }
    /* compiled once per prefixes tuple (a run has one): compiling cleared 50 kB each call, as
     * many instructions as the scan of a small file and the whole first-level data cache */
    static Prefixes p;
    static PyObject *compiled = NULL; /* the tuple `p` was compiled from (a reference kept) */
    if (prefixes != compiled) {
        Py_CLEAR(compiled);
        if (compile_prefixes(prefixes, &p) < 0) Py_RETURN_NONE;
        compiled = Py_NewRef(prefixes);
    }
    Text t = {PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text), text};
    Out o = {PyList_New(0), PyList_New(0), PyList_New(0), PyList_New(0), NULL, 0, 0, NULL, 0, 0,
             {NULL, 0, 0, rows_itemsize(t.n)}, PyList_New(0), NULL, 0, 0};
    PyObject *result = NULL;
    if (o.includes && o.directives && o.spans && o.problems && o.names && scan_text(&t, &p, &o) == 0) {
        PyObject *rows = rows_bytes(&o.idents);
        if (rows)
            result = Py_BuildValue("(NnOOOOO)", rows, (Py_ssize_t)o.idents.itemsize, o.names, o.includes,
                                   o.directives, o.spans, o.problems);
    }
    rows_free(&o.idents);
    Py_XDECREF(o.names);
    PyMem_Free(o.slots);
    Py_XDECREF(o.includes);
    Py_XDECREF(o.directives);
    Py_XDECREF(o.spans);
    Py_XDECREF(o.problems);
    PyMem_Free(o.sp);
    PyMem_Free(o.dr);
    return result;
}

PyObject *musify_cscan_ident_type(void) { return IdentType; }
PyObject *musify_cscan_ctx(Py_ssize_t ctx) { return CTX[ctx]; }

/* bind(Ident, Include, Directive, Problem, ctx_members): the Python types the results are made of */
static PyObject *cscan_bind(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *ident, *include, *dir, *problem, *ctx;
    if (!PyArg_ParseTuple(args, "O!O!O!OO!:bind", &PyType_Type, &ident, &PyType_Type, &include,
                          &PyType_Type, &dir, &problem, &PyTuple_Type, &ctx))
        return NULL;
    if (PyTuple_GET_SIZE(ctx) != 8) {
        PyErr_SetString(PyExc_ValueError, "bind: expected the 8 Ctx members");
        return NULL;
    }
    PyTypeObject *types[3] = {(PyTypeObject *)ident, (PyTypeObject *)include, (PyTypeObject *)dir};
    for (int i = 0; i < 3; i++) {
        if (!PyType_IsSubtype(types[i], &PyTuple_Type)) {
            PyErr_SetString(PyExc_TypeError, "bind: Ident, Include and Directive must be tuple types");
            return NULL;
        }
    }
    Py_XSETREF(IdentType, Py_NewRef(ident));
    Py_XSETREF(IncludeType, Py_NewRef(include));
    Py_XSETREF(DirectiveType, Py_NewRef(dir));
    Py_XSETREF(ProblemType, Py_NewRef(problem));
    for (int i = 0; i < 8; i++) Py_XSETREF(CTX[i], Py_NewRef(PyTuple_GET_ITEM(ctx, i)));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"scan", cscan_scan, METH_VARARGS, "scan(text, prefixes) -> (idents, includes, directives, spans, problems)"},
    {"renames", musify_cscan_renames, METH_VARARGS,
     "renames(ident rows, names, fast, skip, migrated_mask[, text, unknown, decided_mask, declared, declaring_mask, "
     "first]) -> (edit rows, item size, "
     "fields, rest, uses)"},
    {"previous_token", musify_cscan_previous_token, METH_VARARGS, "previous_token(text, start) -> (token, start)"},
    {"line_starts", musify_cscan_line_starts, METH_O, "line_starts(text) -> offsets where lines start"},
    {"named_positions", musify_cscan_named_positions, METH_VARARGS,
     "named_positions(text, [(offset, name)...]) -> [(name, line, column)...] or None: LineIndex.named_positions"},
    {"unknown_use", musify_cscan_unknown_use, METH_VARARGS,
     "unknown_use(text, start) -> 0 declared, 1 member, 2 use, 3 undecided: identifiers.unknown_use_python in C"},
    {"bind", cscan_bind, METH_VARARGS, "bind(Ident, Include, Directive, Problem, ctx_members)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cscan", "The scanner's hot path in C.", -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__cscan(void) {
    for (int c = 0; c < 256; c++) LATIN1_WORD[c] = c < 128 ? ASCII_WORD[c] : Py_UNICODE_ISALNUM((Py_UCS4)c) ? 2 : 0;
    S_COMMENT = PyUnicode_InternFromString("comment");
    S_STRING_LIT = PyUnicode_InternFromString("string literal");
    S_CHAR_LIT = PyUnicode_InternFromString("character literal");
    S_RAW_LIT = PyUnicode_InternFromString("raw string literal");
    S_EMPTY = PyUnicode_InternFromString("");
    if (!S_COMMENT || !S_STRING_LIT || !S_CHAR_LIT || !S_RAW_LIT || !S_EMPTY) return NULL;
    return PyModule_Create(&module);
}
