/* The scanner's second pass (scanner.py `_label_identifiers`): the candidate identifiers, words
 * that start with one of the prefixes, each with its context from the first pass's spans and
 * directives, as rows of an `IdentList` and the distinct names.
 *
 * A part of `_cscan.c`, included once there after `_cscan_lex.h` (whose output types it reads),
 * not a header for other files: `scan_kind` inlines it into one copy per string kind. */
#ifndef MUSIFY_CSCAN_LABEL_H
#define MUSIFY_CSCAN_LABEL_H
#if defined(__SSE2__) && !defined(MUSIFY_CSCAN_NO_SIMD)
#include <emmintrin.h>
/* (SSSE3's and AVX2's: only in `head_starts` and `head_starts_avx2`, compiled for them, run when
 * the CPU has them) */
#include <immintrin.h>
#endif

/* ---- the second pass: candidate identifiers with their context ---- */

typedef struct {
    /* the prefixes, each ASCII word characters only, listed by their first two characters */
    char buf[4096];
    Py_ssize_t off[256], len[256];
    unsigned char head[128];
    /* for `head_starts`: c is a head when head_lo[c & 15] has bit c >> 4, and the second
     * character of some prefix (any, when a prefix is one character long) when second_lo has it */
    unsigned char head_lo[16], second_lo[16];
    unsigned char single[128]; /* 1 when a one-character prefix is this character */
    /* 1 + the index of the list of the prefixes that start with these two characters (0: none):
     * a word is compared with those only (a bucket by the first character alone held 15 of
     * today's prefixes for '_', and every `__device__` was compared with each) */
    unsigned char pair[128][128];
    short first[256], next[256]; /* a list's first prefix; the prefix after a prefix (-1: the end) */
} Prefixes;

/* 0 when every prefix is ASCII word characters and they fit; -1 otherwise (the caller falls back) */
static int compile_prefixes(PyObject *seq, Prefixes *p) {
    memset(p->head, 0, sizeof p->head);
    memset(p->head_lo, 0, sizeof p->head_lo);
    memset(p->second_lo, 0, sizeof p->second_lo);
    memset(p->pair, 0, sizeof p->pair);
    memset(p->single, 0, sizeof p->single);
    Py_ssize_t used = 0, n = PyTuple_GET_SIZE(seq), lists = 0;
    if (n > 255) return -1; /* (a list's index + 1 fits a byte) */
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
        p->head_lo[c[0] & 15] |= (unsigned char)(1u << (c[0] >> 4));
        if (len == 1) {
            p->single[c[0]] = 1;
            memset(p->second_lo, 0xff, sizeof p->second_lo);
            continue;
        }
        p->second_lo[c[1] & 15] |= (unsigned char)(1u << (c[1] >> 4));
        unsigned char *list = &p->pair[c[0]][c[1]];
        if (!*list) {
            *list = (unsigned char)++lists;
            p->first[lists - 1] = -1;
        }
        p->next[i] = p->first[*list - 1];
        p->first[*list - 1] = (short)i;
    }
    return 0;
}

/* some prefix starts at i (text[i] is an ASCII head character) */
static ALWAYS_INLINE int prefix_at(const Text *t, const Prefixes *p, Py_ssize_t i) {
    Py_UCS4 c0 = CH(t, i);
    if (p->single[c0]) return 1;
    if (i + 1 >= t->n) return 0; /* every other prefix is longer */
    Py_UCS4 c1 = CH(t, i + 1);
    if (c1 >= 128 || !p->pair[c0][c1]) return 0;
    for (int k = p->first[p->pair[c0][c1] - 1]; k >= 0; k = p->next[k]) {
        Py_ssize_t len = p->len[k];
        if (i + len > t->n) continue;
        const char *s = p->buf + p->off[k];
        Py_ssize_t j = 2;
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
        if (!s->len) return s;
        if (s->hash != h || s->len != len) continue;
        if (t->kind == PyUnicode_1BYTE_KIND) {
            const char *d = t->data;
            if (memcmp(d + s->start, d + start, (size_t)len) == 0) return s;
            continue;
        }
        Py_ssize_t i = 0;
        while (i < len && CH(t, s->start + i) == CH(t, start + i)) i++;
        if (i == len) return s;
    }
}

/* a hash of text[start:end] (its slot is the low bits): of one-byte text 8 bytes at a time, the
 * multiplications' high bits folded down at the end (a product's low bits see only its factors'
 * low bits); else FNV-1a over the code points. Only this scan's table compares them. */
static ALWAYS_INLINE uint64_t name_hash(const Text *t, Py_ssize_t start, Py_ssize_t end) {
    uint64_t h = 1469598103934665603ULL;
    if (t->kind != PyUnicode_1BYTE_KIND) {
        for (Py_ssize_t i = start; i < end; i++) h = (h ^ CH(t, i)) * 1099511628211ULL;
        return h;
    }
    const unsigned char *s = (const unsigned char *)t->data + start;
    Py_ssize_t len = end - start;
    for (; len >= 8; s += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, s, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
    }
    uint64_t w = (uint64_t)(end - start) << 56; /* the rest, and the length */
    memcpy(&w, s, (size_t)len);  /* (len < 8: the length byte stays) */
    h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
    return h ^ (h >> 32) ^ (h >> 47);
}

/* the index of text[start:end] in o->names, appended when new (-1: an error was raised) */
static ALWAYS_INLINE Py_ssize_t intern_name(const Text *t, Out *o, Py_ssize_t start, Py_ssize_t end) {
    uint64_t h = name_hash(t, start, end);
    if (2 * (o->used + 1) > o->nslots) { /* keep it at most half full: grow, and place the names again */
        Py_ssize_t n = o->nslots ? o->nslots * 2 : SMALL_SLOTS;
        struct NameSlot *old = o->slots, *fresh = o->nslots ? PyMem_Calloc((size_t)n, sizeof *fresh) : o->small;
        if (!fresh) {
            PyErr_NoMemory();
            return -1;
        }
        Py_ssize_t was = o->nslots;
        o->slots = fresh;
        o->nslots = n;
        for (Py_ssize_t k = 0; k < was; k++)
            if (old[k].len) *name_slot(t, o, old[k].hash, old[k].start, old[k].len) = old[k];
        if (old != o->small) PyMem_Free(old);
    }
    struct NameSlot *s = name_slot(t, o, h, start, end - start);
    if (s->len) return s->index;
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
    o->contexts |= 1u << ctx;
    return rows_push(&o->idents, row, 4);
}

/* Which of the 16 bytes at `s` are ASCII word characters, as bits (bit k: s[k]). With SSE2 (every
 * x86-64) a handful of vector compares for the 16; elsewhere the table, a byte at a time. */
static ALWAYS_INLINE unsigned word_mask16(const unsigned char *s) {
#if defined(__SSE2__) && !defined(MUSIFY_CSCAN_NO_SIMD)
    __m128i v = _mm_loadu_si128((const __m128i *)s);
    /* v | 0x20 is a lowercase letter exactly when v is a letter; signed compares leave bytes
     * >= 0x80 (negative) out of every range, as the ASCII table does */
    __m128i low = _mm_or_si128(v, _mm_set1_epi8(0x20));
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(low, _mm_set1_epi8('a' - 1)), _mm_cmplt_epi8(low, _mm_set1_epi8('z' + 1)));
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    __m128i word = _mm_or_si128(_mm_or_si128(letter, digit), _mm_cmpeq_epi8(v, _mm_set1_epi8('_')));
    return (unsigned)_mm_movemask_epi8(word);
#else
    unsigned m = 0;
    for (int k = 0; k < 16; k++) m |= (unsigned)ASCII_WORD[s[k] & 0x7f] << k;
    return m;
#endif
}

/* The starts of `\w` runs in `nblocks` 16-byte blocks of ASCII text at `d`, as bits (out[k] bit j:
 * byte 16k+j is a word character whose predecessor is not; `carry`: the byte before `d` is one),
 * and the word characters (words[k]). */
static void run_starts(const unsigned char *d, Py_ssize_t nblocks, unsigned carry, uint16_t *out, uint16_t *words) {
    for (Py_ssize_t k = 0; k < nblocks; k++) {
        unsigned word = word_mask16(d + 16 * k);
        out[k] = (uint16_t)(word & ~((word << 1) | carry));
        words[k] = (uint16_t)word;
        carry = word >> 15;
    }
}

#if defined(__SSE2__) && !defined(MUSIFY_CSCAN_NO_SIMD) && defined(__GNUC__)
#define HEAD_STARTS 1
/* ASCII_WORD as `head_lo` keeps the heads (filled when the module is made) */
static unsigned char WORD_LO[16];

/* The bytes of a class, as bits: `table` is the class by the bytes' low halves (bit h of entry l:
 * the byte 16h + l is in it), `lo` the bytes' low halves, `hi` a bit for each one's high half
 * (none for a byte >= 0x80, in no class). SSSE3's byte shuffle reads the 16 entries at once. */
#define CLASS_BITS16(table, lo, hi) \
    (0xffffu & ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(_mm_shuffle_epi8(table, lo), hi), _mm_setzero_si128())))
#define CLASS_BITS32(table, lo, hi) \
    (~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(table, lo), hi), _mm256_setzero_si256())))

/* `run_starts` keeping only the starts that may begin a prefix: a head character followed by a
 * second character of some prefix (`second_lo`). Most runs start otherwise, and are passed over
 * here, 16 bytes at a time, with the CPU's SSSE3 (asked first, `simd_level`). The byte after a
 * block is read: the text's terminating NUL after the last one. */
__attribute__((target("ssse3"))) static void head_starts(const unsigned char *d, Py_ssize_t nblocks, unsigned carry,
                                                         const Prefixes *p, uint16_t *out, uint16_t *words) {
    const __m128i word_lo = _mm_loadu_si128((const __m128i *)WORD_LO);
    const __m128i head_lo = _mm_loadu_si128((const __m128i *)p->head_lo);
    const __m128i second_lo = _mm_loadu_si128((const __m128i *)p->second_lo);
    const __m128i hi_bit = _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, (char)128, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m128i nibble = _mm_set1_epi8(0x0f);
    for (Py_ssize_t k = 0; k < nblocks; k++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(d + 16 * k)), next = _mm_loadu_si128((const __m128i *)(d + 16 * k + 1));
        __m128i lo = _mm_and_si128(v, nibble), hi = _mm_shuffle_epi8(hi_bit, _mm_and_si128(_mm_srli_epi16(v, 4), nibble));
        __m128i next_lo = _mm_and_si128(next, nibble);
        __m128i next_hi = _mm_shuffle_epi8(hi_bit, _mm_and_si128(_mm_srli_epi16(next, 4), nibble));
        unsigned word = CLASS_BITS16(word_lo, lo, hi);
        out[k] = (uint16_t)(word & ~((word << 1) | carry) & CLASS_BITS16(head_lo, lo, hi) &
                            CLASS_BITS16(second_lo, next_lo, next_hi));
        words[k] = (uint16_t)word;
        carry = word >> 15;
    }
}

/* `head_starts` 32 bytes at a time (AVX2: the same shuffles in each 16-byte half), two blocks' bits
 * per step; an odd last block by `head_starts` */
__attribute__((target("avx2"))) static void head_starts_avx2(const unsigned char *d, Py_ssize_t nblocks, unsigned carry,
                                                             const Prefixes *p, uint16_t *out, uint16_t *words) {
    const __m256i word_lo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)WORD_LO));
    const __m256i head_lo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p->head_lo));
    const __m256i second_lo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p->second_lo));
    const __m256i hi_bit = _mm256_setr_epi8(1, 2, 4, 8, 16, 32, 64, (char)128, 0, 0, 0, 0, 0, 0, 0, 0,
                                            1, 2, 4, 8, 16, 32, 64, (char)128, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m256i nibble = _mm256_set1_epi8(0x0f);
    Py_ssize_t k = 0;
    for (; k + 2 <= nblocks; k += 2) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(d + 16 * k));
        __m256i next = _mm256_loadu_si256((const __m256i *)(d + 16 * k + 1));
        __m256i lo = _mm256_and_si256(v, nibble);
        __m256i hi = _mm256_shuffle_epi8(hi_bit, _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble));
        __m256i next_lo = _mm256_and_si256(next, nibble);
        __m256i next_hi = _mm256_shuffle_epi8(hi_bit, _mm256_and_si256(_mm256_srli_epi16(next, 4), nibble));
        uint32_t word = CLASS_BITS32(word_lo, lo, hi);
        uint32_t starts = word & ~((word << 1) | carry) & CLASS_BITS32(head_lo, lo, hi) &
                          CLASS_BITS32(second_lo, next_lo, next_hi);
        carry = word >> 31;
        out[k] = (uint16_t)starts;
        out[k + 1] = (uint16_t)(starts >> 16);
        words[k] = (uint16_t)word;
        words[k + 1] = (uint16_t)(word >> 16);
    }
    if (k < nblocks) head_starts(d + 16 * k, 1, carry, p, out + k, words + k);
}
#endif
/* which of the paths `label_ascii` takes: 2 `head_starts_avx2`, 1 `head_starts`, 0 `run_starts`
 * (set when the module is made, to the best the CPU runs; `_simd` lowers it for the tests) */
static int simd_level;

/* `label_identifiers` of an all-ASCII text: there every `\w` run is ASCII, so a match can only
 * start where a run starts (elsewhere it follows an ASCII word character and is dropped). The
 * runs' starts come as bits, a window of 16-byte blocks at a time (`run_starts`, `head_starts`),
 * and only those whose first byte begins some prefix are looked at: the code between them, most
 * of the text, costs a few instructions per 16 bytes instead of a table read per byte. */
static ALWAYS_INLINE int label_ascii(const Text *t, const Prefixes *p, Out *o) {
    enum { WINDOW = 256 };  /* blocks at a time */
    uint16_t starts[WINDOW + 1], words[WINDOW + 1];
    const unsigned char *d = t->data;
    Py_ssize_t n = t->n, si = 0, di = 0;
    for (Py_ssize_t base = 0; base < n; base += 16 * WINDOW) {
        Py_ssize_t left = n - base, blocks = left / 16 < WINDOW ? left / 16 : WINDOW;
        unsigned carry = base > 0 && ASCII_WORD[d[base - 1]];
#ifdef HEAD_STARTS
        if (simd_level >= 2) head_starts_avx2(d + base, blocks, carry, p, starts, words);
        else if (simd_level == 1) head_starts(d + base, blocks, carry, p, starts, words);
        else
#endif
            run_starts(d + base, blocks, carry, starts, words);
        if (blocks < WINDOW && left % 16) { /* the last, short block: from a copy, so nothing past the text is read */
            unsigned char tail[16] = {0};
            memcpy(tail, d + base + 16 * blocks, (size_t)(left % 16));
            run_starts(tail, 1, blocks ? ASCII_WORD[d[base + 16 * blocks - 1]] : carry, starts + blocks, words + blocks);
            blocks++;
        }
        for (Py_ssize_t k = 0; k < blocks; k++) {
            for (unsigned bits = starts[k]; bits; bits &= bits - 1) {
                int j = __builtin_ctz(bits);
                Py_ssize_t a = base + 16 * k + j, end = k;
                if (!p->head[d[a]] || !prefix_at(t, p, a)) continue;
                /* the run's end: the first byte after it that is no word character, from the
                 * masks (the short block's copy ends in NULs); past the window, a byte at a time */
                unsigned rest = ~(unsigned)words[k] & (0xffffu << j) & 0xffffu;
                while (!rest && ++end < blocks) rest = ~(unsigned)words[end] & 0xffffu;
                Py_ssize_t b = end < blocks ? base + 16 * end + __builtin_ctz(rest) : base + 16 * blocks;
                while (b < n && ASCII_WORD[d[b]]) b++;
                if (add_ident(t, o, a, b, &si, &di) < 0) return -1;
            }
        }
    }
    return 0;
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
    if (t->kind == PyUnicode_1BYTE_KIND && PyUnicode_IS_ASCII(t->text)) return label_ascii(t, p, o);
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

#endif
