/* `launch_shape.well_formed_python` in C (musify/frontend/launch_shape.py is the reference and
 * says what the subset is and why a launch in it needs no parse); part of the `_claunch`
 * extension. tests/test_launch_shape.py proves both give the same answers on generated inputs.
 *
 * launch_shape(text, start, end, reserved) -> bool: text[start:end] is a launch of the subset;
 * `reserved` (a set) holds the words never read as a name. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

enum { K_END, K_ID, K_NUM, K_OP, K_BAD };
#define MAX_DEPTH 32 /* launch_shape.MAX_DEPTH */

typedef struct {
    int kind;
    const void *data;
    PyObject *text, *reserved;
    Py_ssize_t pos, end;       /* the next character to read, the end of the launch */
    int tok;                   /* the current token: K_* */
    Py_ssize_t ts, te;         /* its span */
    char op[4];                /* an operator's spelling */
    unsigned code;             /* the same, packed (`pack`): what `is_op` compares */
    int depth, failed;         /* failed: an error was raised (the answer is then NULL) */
} Reader;

#define AT(r, i) PyUnicode_READ((r)->kind, (r)->data, (i))

static inline int word_char(Py_UCS4 c) {  /* the regex `\w` */
    return c < 128 ? (c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z'))
                   : (int)Py_UNICODE_ISALNUM(c);
}
static inline int hex_digit(Py_UCS4 c) { return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'f'); }
static inline int dec_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; }
static inline int ascii_start(Py_UCS4 c) { return c == '_' || ((c | 32) >= 'a' && (c | 32) <= 'z'); }
static inline int ascii_word(Py_UCS4 c) { return ascii_start(c) || dec_digit(c); }

/* the character at `i` within the launch, or 0 past its end (the regex matches within it) */
static inline Py_UCS4 ch(const Reader *r, Py_ssize_t i) { return i < r->end ? AT(r, i) : 0; }

/* `(?:ll|LL|l|L)` at *i: advances past it, 1 when one was there */
static int long_suffix(const Reader *r, Py_ssize_t *i) {
    Py_UCS4 a = ch(r, *i), b = ch(r, *i + 1);
    if ((a == 'l' && b == 'l') || (a == 'L' && b == 'L')) *i += 2;
    else if (a == 'l' || a == 'L') *i += 1;
    else return 0;
    return 1;
}

/* the `num` alternative at `s`: its end, or -1 */
static Py_ssize_t number(const Reader *r, Py_ssize_t s) {
    Py_ssize_t i = s;
    if (ch(r, i) == '0' && (ch(r, i + 1) == 'x' || ch(r, i + 1) == 'X') && hex_digit(ch(r, i + 2))) {
        i += 2;
        while (hex_digit(ch(r, i))) i++;
    } else if (ch(r, i) == '0' || (dec_digit(ch(r, i)) && ch(r, i) != '0')) {
        if (ch(r, i) == '0') i++;
        else while (dec_digit(ch(r, i))) i++;
        if (ch(r, i) == '.' && dec_digit(ch(r, i + 1))) {
            i += 1;
            while (dec_digit(ch(r, i))) i++;
            if (ch(r, i) == 'f' || ch(r, i) == 'F') i++;
        }
    } else {
        return -1;
    }
    if (ch(r, i) == 'u' || ch(r, i) == 'U') {
        i++;
        long_suffix(r, &i);
    } else if (long_suffix(r, &i) && (ch(r, i) == 'u' || ch(r, i) == 'U')) {
        i++;
    }
    /* `(?![\w.])`: a shorter match would stop before a word character or '.' too */
    if (i < r->end && (word_char(AT(r, i)) || AT(r, i) == '.')) return -1;
    return i;
}

static const char OPS1[] = "-+*/%&|^!~.,()[]<>";

/* an operator of up to three characters as one number (folded where `s` is a literal): tokens are
 * compared by it, not by their spelling */
#define ALWAYS_INLINE inline __attribute__((always_inline))
static ALWAYS_INLINE unsigned pack(const char *s) {
    return !s[0] ? 0 : (unsigned char)s[0] | (!s[1] ? 0 : (unsigned)(unsigned char)s[1] << 8 |
                                                       (!s[2] ? 0 : (unsigned)(unsigned char)s[2] << 16));
}

/* the operator of `len` characters at `i` becomes the current token */
static void set_op(Reader *r, Py_ssize_t i, int len) {
    for (int k = 0; k < len; k++) r->op[k] = (char)AT(r, i + k);
    r->op[len] = 0;
    r->code = pack(r->op);
    r->tok = K_OP;
}

static int spelled(const Reader *r, Py_ssize_t i, const char *s) {
    for (Py_ssize_t k = 0; s[k]; k++)
        if (ch(r, i + k) != (Py_UCS4)(unsigned char)s[k]) return 0;
    return 1;
}

/* reads the next token into r->tok (K_END at the end, K_BAD where no token matches) */
static void next(Reader *r) {
    Py_ssize_t i = r->pos;
    while (i < r->end) {
        Py_UCS4 c = AT(r, i);
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') break;
        i++;
    }
    r->ts = i;
    if (i >= r->end) {
        r->tok = K_END;
        r->pos = i;
        return;
    }
    Py_UCS4 c = AT(r, i);
    Py_ssize_t e = dec_digit(c) ? number(r, i) : -1;
    if (e >= 0) {
        r->tok = K_NUM;
    } else if (dec_digit(c)) {
        r->tok = K_BAD;
    } else if (ascii_start(c)) {
        e = i + 1;
        while (e < r->end && ascii_word(AT(r, e))) e++;
        r->tok = (e < r->end && word_char(AT(r, e))) ? K_BAD : K_ID;  /* `(?!\w)` */
    } else {
        /* "<<<" ">>>", then "++" "--" "::" "->" "&&" "||" "==" "!=", then one of OPS1 */
        Py_UCS4 d = ch(r, i + 1);
        r->tok = K_BAD;
        if ((c == '<' || c == '>') && d == c && ch(r, i + 2) == c) {
            set_op(r, i, 3);
            e = i + 3;
        } else if (((c == '+' || c == '-' || c == ':' || c == '&' || c == '|') && d == c) || (c == '-' && d == '>')
                   || ((c == '=' || c == '!') && d == '=')) {
            set_op(r, i, 2);
            e = i + 2;
        } else if (c < 128 && c && strchr(OPS1, (int)c)) {
            set_op(r, i, 1);
            e = i + 1;
            if (c == '/' && (d == '/' || d == '*')) r->tok = K_BAD;  /* a comment */
        }
    }
    r->te = e;
    r->pos = r->tok == K_BAD ? r->end : e;
}

static ALWAYS_INLINE int is_op(const Reader *r, const char *s) { return r->tok == K_OP && r->code == pack(s); }

static ALWAYS_INLINE int take(Reader *r, const char *s) {
    if (!is_op(r, s)) return 0;
    next(r);
    return 1;
}

/* the current token is a word equal to `s` (strlen of a literal: folded) */
static ALWAYS_INLINE int is_word(const Reader *r, const char *s) {
    if (r->tok != K_ID || (Py_ssize_t)strlen(s) != r->te - r->ts) return 0;
    return spelled(r, r->ts, s);
}

/* A frozenset of reserved words as a C hash table, made once for the set it was made from (held,
 * so never another object at the same address): a word is looked up in its text, where making it
 * a string to ask the set was most of the cost of reading a launch. Only its ASCII words are kept:
 * a word read here is ASCII (`next` reads no other), so no other could be it. A set that is not a
 * frozenset (it could change) is asked as before. */
typedef struct {
    PyObject *set;             /* the frozenset the table was made from (a reference), or NULL */
    const Py_UCS1 **word;      /* open addressing: NULL marks an empty slot */
    Py_ssize_t *length, mask;  /* slots - 1 (a power of two) */
} Table;

static Table table;

static inline size_t fnv(size_t h, Py_UCS4 c) { return (h ^ c) * (size_t)1099511628211ULL; }

static int make_table(PyObject *set) {
    Py_ssize_t slots = 16;
    PyObject *key, *keys = NULL;
    while (slots < 2 * PySet_GET_SIZE(set) + 2) slots *= 2;
    const Py_UCS1 **word = PyMem_Calloc((size_t)slots, sizeof *word);
    Py_ssize_t *length = PyMem_Calloc((size_t)slots, sizeof *length);
    if (!word || !length || !(keys = PyObject_GetIter(set))) {
        PyMem_Free(word);
        PyMem_Free(length);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -1;
    }
    while ((key = PyIter_Next(keys))) {
        Py_DECREF(key);  /* the set holds it */
        if (!PyUnicode_Check(key) || !PyUnicode_IS_ASCII(key)) continue;
        const Py_UCS1 *w = PyUnicode_1BYTE_DATA(key);
        Py_ssize_t len = PyUnicode_GET_LENGTH(key);
        size_t h = 14695981039346656037ULL;
        for (Py_ssize_t k = 0; k < len; k++) h = fnv(h, w[k]);
        Py_ssize_t at = (Py_ssize_t)(h & (size_t)(slots - 1));
        while (word[at]) at = (at + 1) & (slots - 1);
        word[at] = w;
        length[at] = len;
    }
    Py_DECREF(keys);
    if (PyErr_Occurred()) {
        PyMem_Free(word);
        PyMem_Free(length);
        return -1;
    }
    PyMem_Free(table.word);
    PyMem_Free(table.length);
    Py_XSETREF(table.set, Py_NewRef(set));
    table.word = word;
    table.length = length;
    table.mask = slots - 1;
    return 0;
}

/* whether the current word is in the table's set */
static int in_table(const Reader *r) {
    size_t h = 14695981039346656037ULL;
    for (Py_ssize_t k = r->ts; k < r->te; k++) h = fnv(h, AT(r, k));
    for (Py_ssize_t at = (Py_ssize_t)(h & (size_t)table.mask); table.word[at]; at = (at + 1) & table.mask) {
        if (table.length[at] != r->te - r->ts) continue;
        Py_ssize_t k = 0;
        while (k < table.length[at] && table.word[at][k] == AT(r, r->ts + k)) k++;
        if (k == table.length[at]) return 1;
    }
    return 0;
}

/* the current word is in `reserved` (-1: an error was raised) */
static int reserved(Reader *r) {
    if (PyFrozenSet_CheckExact(r->reserved)) {
        if (r->reserved != table.set && make_table(r->reserved) < 0) return -1;
        return in_table(r);
    }
    PyObject *w = PyUnicode_Substring(r->text, r->ts, r->te);
    if (!w) return -1;
    int in = PySet_Contains(r->reserved, w);
    Py_DECREF(w);
    return in;
}

static int word(Reader *r) {
    if (r->tok != K_ID) return 0;
    int in = reserved(r);
    if (in < 0) r->failed = 1;
    if (in) return 0;
    next(r);
    return 1;
}

static int name(Reader *r) {
    if (!word(r)) return 0;
    while (take(r, "::"))
        if (!word(r)) return 0;
    return 1;
}

#define WORD(s) {s, sizeof s - 1}
static const struct {
    const char *s;
    Py_ssize_t len;
} PRIMITIVE[] = {
    WORD("bool"), WORD("char"), WORD("int"), WORD("float"), WORD("double"), WORD("void"), WORD("size_t"),
    WORD("ssize_t"), WORD("ptrdiff_t"), WORD("intptr_t"), WORD("uintptr_t"), WORD("charptr_t"), WORD("nullptr_t"),
    WORD("max_align_t"), WORD("int8_t"), WORD("int16_t"), WORD("int32_t"), WORD("int64_t"), WORD("uint8_t"),
    WORD("uint16_t"), WORD("uint32_t"), WORD("uint64_t"), WORD("char8_t"), WORD("char16_t"), WORD("char32_t"),
    WORD("char64_t"), {NULL, 0}};

static int primitive(const Reader *r) {
    if (r->tok != K_ID) return 0;
    for (int k = 0; PRIMITIVE[k].s; k++)
        if (PRIMITIVE[k].len == r->te - r->ts && spelled(r, r->ts, PRIMITIVE[k].s)) return 1;
    return 0;
}

static int expression(Reader *r);

/* item (, item)* close */
static int list(Reader *r, int (*item)(Reader *), const char *close) {
    for (;;) {
        if (!item(r)) return 0;
        if (take(r, close)) return 1;
        if (!take(r, ",")) return 0;
    }
}

static int arguments(Reader *r, const char *close) { return take(r, close) || list(r, expression, close); }

static int primary(Reader *r) {
    if (r->tok == K_NUM || is_word(r, "nullptr") || is_word(r, "true") || is_word(r, "false")) {
        next(r);
        return 1;
    }
    if (is_word(r, "sizeof")) {
        next(r);
        if (!take(r, "(")) return 0;
        if (primitive(r)) next(r);
        else if (!name(r)) return 0;
        return take(r, ")");
    }
    if (r->tok == K_ID) return name(r);
    if (take(r, "(")) return expression(r) && take(r, ")");
    return 0;
}

static int postfix(Reader *r) {
    if (!primary(r)) return 0;
    for (;;) {
        if (take(r, ".") || take(r, "->")) {
            if (!word(r)) return 0;
        } else if (take(r, "[")) {
            if (!(expression(r) && take(r, "]"))) return 0;
        } else if (take(r, "(")) {
            if (!arguments(r, ")")) return 0;
        } else {
            return 1;
        }
    }
}

static int unary(Reader *r) {
    while (r->tok == K_OP && r->op[1] == 0 && strchr("-+!~*&", r->op[0])) next(r);
    return postfix(r);
}

static int binary(const Reader *r) {
    /* + - * / % & | ^ && || == != */
    if (r->tok != K_OP) return 0;
    if (!r->op[1]) return strchr("+-*/%&|^", r->op[0]) != NULL;
    return r->code == pack("&&") || r->code == pack("||") || r->code == pack("==") || r->code == pack("!=");
}

static int expression(Reader *r) {
    r->depth++;
    int ok = r->depth <= MAX_DEPTH && unary(r);
    while (ok && binary(r)) {
        next(r);
        ok = unary(r);
    }
    r->depth--;
    return ok;
}

static int template_argument(Reader *r) {
    if (r->tok == K_NUM || primitive(r)) {
        next(r);
        return 1;
    }
    return name(r);
}

static int launch(Reader *r) {
    take(r, "::");
    if (!name(r)) return 0;
    if (take(r, "<") && !list(r, template_argument, ">")) return 0;
    if (!take(r, "<<<") || !list(r, expression, ">>>")) return 0;
    return take(r, "(") && arguments(r, ")") && r->tok == K_END;
}

/* whether text[start:end] is a launch of the subset (-1: an error was raised); `reserved` a set */
int launch_well_formed(PyObject *text, Py_ssize_t start, Py_ssize_t end, PyObject *reserved) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (start < 0) start = 0;
    if (end > n) end = n;
    Reader r = {PyUnicode_KIND(text), PyUnicode_DATA(text), text, reserved, start, end, K_END, 0, 0, {0}, 0, 0};
    next(&r);
    int ok = start < end && launch(&r);
    return r.failed ? -1 : ok;
}

PyObject *musify_claunch_launch_shape(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *words;
    Py_ssize_t start, end;
    if (!PyArg_ParseTuple(args, "UnnO:launch_shape", &text, &start, &end, &words)) return NULL;
    if (!PyAnySet_Check(words)) {
        PyErr_SetString(PyExc_TypeError, "launch_shape: reserved must be a set");
        return NULL;
    }
    int ok = launch_well_formed(text, start, end, words);
    if (ok < 0) return NULL;
    return PyBool_FromLong(ok);
}
