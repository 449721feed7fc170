/* The _crecord extension's output buffer and JSON strings (musify/_crecord.h declares them): what
 * record() and entry() write their JSON with. */
#include "_crecord.h"

/* out_grow's slow path: the buffer doubled until `more` bytes fit */
int out_realloc(Out *o, Py_ssize_t more) {
    if (o->len + more <= o->cap) return 0;
    Py_ssize_t cap = o->cap ? o->cap : 256;
    while (cap < o->len + more) cap *= 2;
    if (o->bytes) {  /* the bytes object resized (it is only ours); on failure it is gone */
        if (_PyBytes_Resize(&o->bytes, cap) < 0) {
            o->buf = NULL;
            o->len = o->cap = 0;
            return -1;
        }
        o->buf = PyBytes_AS_STRING(o->bytes);
        o->cap = cap;
        return 0;
    }
    char *b = PyMem_Realloc(o->buf, (size_t)cap);
    if (!b) {
        PyErr_NoMemory();
        return -1;
    }
    o->buf = b;
    o->cap = cap;
    return 0;
}

PyObject *out_str(Out *o) {
    PyObject *s = PyUnicode_New(o->len, 127);
    if (s) memcpy(PyUnicode_DATA(s), o->buf, (size_t)o->len);
    return s;
}

/* ---- JSON strings, as json.encoder.encode_basestring_ascii writes them ---- */

static const char HEX[] = "0123456789abcdef";

static inline int plain_char(Py_UCS4 c) { return c >= ' ' && c <= '~' && c != '\\' && c != '"'; }

static int out_u16(Out *o, Py_UCS4 c) {
    char u[6] = {'\\', 'u', HEX[(c >> 12) & 15], HEX[(c >> 8) & 15], HEX[(c >> 4) & 15], HEX[c & 15]};
    return out_write(o, u, 6);
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* the bytes of x that end a run of plain characters (plain_run's test), as a mask */
static inline unsigned not_plain_mask(__m128i x) {
    const __m128i space = _mm_set1_epi8(' '), del = _mm_set1_epi8(0x7f), bs = _mm_set1_epi8('\\'),
                  quote = _mm_set1_epi8('"');
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(x, space), _mm_cmpeq_epi8(x, del)),
                                                    _mm_or_si128(_mm_cmpeq_epi8(x, bs), _mm_cmpeq_epi8(x, quote))));
}

/* whether the n bytes at b are all plain characters, sixteen looked at once: the last block
 * overlapping the one before, or (under sixteen: most keys and names of an entry) the bytes
 * copied into a block of plain ones first. A name checked character by character was most of
 * what writing it cost. */
static inline int all_plain(const Py_UCS1 *b, Py_ssize_t n) {
    if (n < 16) {
        unsigned char block[16];
        memset(block, 'a', sizeof block);
        memcpy(block, b, (size_t)n);
        return !not_plain_mask(_mm_loadu_si128((const __m128i *)block));
    }
    Py_ssize_t j = 0;
    for (; j + 16 <= n; j += 16)
        if (not_plain_mask(_mm_loadu_si128((const __m128i *)(b + j)))) return 0;
    return j == n || !not_plain_mask(_mm_loadu_si128((const __m128i *)(b + n - 16)));
}
#endif

/* the end of the run of plain characters at b[i:hi] (one-byte text of `n` characters): sixteen
 * bytes looked at once where SSE2 is there (every x86-64), while they lie in the text (a short
 * name's run ends within its first sixteen: the bytes after `hi` are read, not used): a byte
 * below ' ' as a signed char (a control character or one of 0x80-0xff), DEL, a backslash or a
 * quote ends the run */
static inline Py_ssize_t plain_run(const Py_UCS1 *b, Py_ssize_t i, Py_ssize_t hi, Py_ssize_t n) {
    Py_ssize_t j = i;
#if defined(__SSE2__)
    while (j < hi && n - j >= 16) {
        unsigned mask = not_plain_mask(_mm_loadu_si128((const __m128i *)(b + j)));
        if (hi - j < 16) mask |= 1u << (hi - j);  /* the run ends at `hi` at the latest */
        if (mask) return j + __builtin_ctz(mask);
        j += 16;
    }
#else
    (void)n;
#endif
    while (j < hi && plain_char(b[j])) j++;
    return j;
}

/* text[lo:hi] quoted */
int out_quoted(Out *o, PyObject *text, Py_ssize_t lo, Py_ssize_t hi) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (out_grow(o, hi - lo + 2) < 0) return -1;
#if defined(__SSE2__)
    if (kind == PyUnicode_1BYTE_KIND && all_plain((const Py_UCS1 *)data + lo, hi - lo)) {  /* as it is */
        char *d = o->buf + o->len;
        d[0] = '"';
        memcpy(d + 1, (const char *)data + lo, (size_t)(hi - lo));
        d[hi - lo + 1] = '"';
        o->len += hi - lo + 2;
        return 0;
    }
#endif
    o->buf[o->len++] = '"';
    for (Py_ssize_t i = lo; i < hi; i++) {
        if (kind == PyUnicode_1BYTE_KIND) {  /* a run of plain characters copied at once */
            const Py_UCS1 *b = (const Py_UCS1 *)data;
            Py_ssize_t j = plain_run(b, i, hi, PyUnicode_GET_LENGTH(text));
            if (j > i) {
                if (out_write(o, (const char *)b + i, j - i) < 0) return -1;
                if (j == hi) break;
                i = j;
            }
        }
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (plain_char(c)) {  /* room for the rest as plain characters was made: more only after an escape */
            if (o->len >= o->cap && out_grow(o, 1) < 0) return -1;
            o->buf[o->len++] = (char)c;
            continue;
        }
        int r;
        switch (c) {
        case '\\': r = OUT_LIT(o, "\\\\"); break;
        case '"': r = OUT_LIT(o, "\\\""); break;
        case '\b': r = OUT_LIT(o, "\\b"); break;
        case '\f': r = OUT_LIT(o, "\\f"); break;
        case '\n': r = OUT_LIT(o, "\\n"); break;
        case '\r': r = OUT_LIT(o, "\\r"); break;
        case '\t': r = OUT_LIT(o, "\\t"); break;
        default:
            if (c >= 0x10000) {
                Py_UCS4 v = c - 0x10000;
                r = out_u16(o, 0xd800 | ((v >> 10) & 0x3ff));
                if (r == 0) r = out_u16(o, 0xdc00 | (v & 0x3ff));
            } else {
                r = out_u16(o, c);
            }
        }
        if (r < 0 || out_grow(o, hi - i) < 0) return -1;
    }
    if (out_grow(o, 1) < 0) return -1;
    o->buf[o->len++] = '"';
    return 0;
}
