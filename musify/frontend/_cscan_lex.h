/* The scanner's first pass (scanner.py `_lex`, character for character): comments, string and
 * character literals, raw strings and directives, recorded as spans, includes, directives and
 * problems, and the output both passes build.
 *
 * A part of `_cscan.c`, included once there (after the Python objects `bind` gives and the
 * context enums), not a header for other files: `scan_kind` inlines these functions into one copy
 * per string kind, which needs them in its translation unit (`CH` is then a plain array read). */
#ifndef MUSIFY_CSCAN_LEX_H
#define MUSIFY_CSCAN_LEX_H

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

/* a name of `Out`'s table: where it first stands in the text, its hash and its index (len 0: an
 * empty slot, as no name is empty) */
struct NameSlot { uint64_t hash; Py_ssize_t start, len, index; };
enum { SMALL_SLOTS = 64 };

typedef struct {
    PyObject *includes, *directives, *spans, *problems;
    Span *sp; Py_ssize_t nsp, capsp;
    Dir *dr; Py_ssize_t ndr, capdr;
    Rows idents; /* (start, end, name index, context) a row: an `IdentList`'s array */
    PyObject *names; /* the distinct names in order */
    /* name -> its index, by the name's place in the text (its first use): a name met again is
     * found without making a string and hashing it (most of a file's candidates repeat) */
    struct NameSlot *slots;
    Py_ssize_t nslots, used; /* nslots: a power of two (0 before the first name); used: filled */
    unsigned contexts; /* bit c set when some row's context is c (`IdentList.holds_context`) */
    /* `#if`/`#elif` lines holding the word include (or INCLUDE): where `header_tests.apply`
     * looks for `__has_include(<...>)` (0: it need not look at all) */
    Py_ssize_t header_tests;
    /* the first table, zeroed with the rest of `Out` (empty): most files need no bigger one, and
     * allocating and clearing it cost as much as finding a small file's names */
    struct NameSlot small[SMALL_SLOTS];
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

/* the string or character literal whose quote `q` is at `start`: its span (context `ctx`) and, when
 * it is not closed, the problem `what`; returns its end (-1: an error was raised) */
static ALWAYS_INLINE Py_ssize_t quoted_literal(const Text *t, Out *o, Py_ssize_t start, Py_UCS4 q, PyObject *what,
                                               int ctx) {
    int closed;
    Py_ssize_t end = literal_body(t, start + 1, q, &closed);
    if (!closed && add_problem(o, start, what) < 0) return -1;
    if (add_span(o, start, end, ctx) < 0) return -1;
    return end;
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
    /* R"([^()\\\s]{0,16})\( : a '"' may be part of the delimiter (`R"""(...)"""`) */
    Py_ssize_t i = quote + 1, k = 0;
    while (k < 16 && i + k < t->n) {
        Py_UCS4 c = CH(t, i + k);
        if (c == '(' || c == ')' || c == '\\' || Py_UNICODE_ISSPACE(c)) break;
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

/* The common directive keywords, made once when the module is (`make_keywords`): a directive's
 * keyword is one of these shared strings rather than a new one (a third of the strings a scan
 * made were these few words); any other keyword is cut from the text. */
static const char *const KEYWORDS[] = {"include", "define", "if", "ifdef", "ifndef", "endif", "else", "elif",
                                       "pragma", "undef", "error", "warning", "line", "import", "include_next"};
#define NKEYWORDS (sizeof KEYWORDS / sizeof KEYWORDS[0])
static PyObject *KEYWORD_STR[NKEYWORDS];
static Py_ssize_t KEYWORD_LEN[NKEYWORDS];

static int make_keywords(void) {
    for (size_t k = 0; k < NKEYWORDS; k++) {
        KEYWORD_LEN[k] = (Py_ssize_t)strlen(KEYWORDS[k]);
        if (!(KEYWORD_STR[k] = PyUnicode_InternFromString(KEYWORDS[k]))) return -1;
    }
    return 0;
}

/* text[s:e], the keyword of a directive, as a new reference */
static ALWAYS_INLINE PyObject *keyword_str(const Text *t, Py_ssize_t s, Py_ssize_t e) {
    for (size_t k = 0; k < NKEYWORDS; k++) {
        if (e - s != KEYWORD_LEN[k] || CH(t, s) != (Py_UCS4)KEYWORDS[k][0]) continue;
        Py_ssize_t i = 1;
        while (i < e - s && CH(t, s + i) == (Py_UCS4)KEYWORDS[k][i]) i++;
        if (i == e - s) return Py_NewRef(KEYWORD_STR[k]);
    }
    return PyUnicode_Substring(t->text, s, e);
}

/* "include" or "INCLUDE" in text[s:e] (a condition that may test for a header: `header_tests.py`) */
static int holds_include_word(const Text *t, Py_ssize_t s, Py_ssize_t e) {
    for (Py_ssize_t i = s; i + 7 <= e; i++) {
        Py_UCS4 c = CH(t, i);
        if (c != 'i' && c != 'I') continue;
        const char *w = c == 'i' ? "include" : "INCLUDE";
        Py_ssize_t k = 1;
        while (k < 7 && CH(t, i + k) == (Py_UCS4)w[k]) k++;
        if (k == 7) return 1;
    }
    return 0;
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
    } else if (keyword_is(t, ks, ke, "if") || keyword_is(t, ks, ke, "elif")) {
        if (holds_include_word(t, pos, end)) o->header_tests++;
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
                          keyword_str(t, ks, ke),
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
            if ((pos = quoted_literal(t, o, start, '"', S_STRING_LIT, C_STRING)) < 0) return -1;
        } else if (c == '\'') {
            if (start && ascii_word(CH(t, start - 1)) && !is_literal_prefix(t, start)) {
                pos = start + 1; /* a digit separator (1'000'000) */
                continue;
            }
            if ((pos = quoted_literal(t, o, start, '\'', S_CHAR_LIT, C_CHAR)) < 0) return -1;
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

#endif
