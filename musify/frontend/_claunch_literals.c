/* `literals.holds` for every registered word at once (musify/passes/literals.py is the
 * reference: a plain `word in text` per word); part of the `_claunch` extension.
 * tests/test_literals.py proves both give the same answers on generated inputs.
 *
 * literals_in(text, words[, simd]) -> int | None: bit i set when words[i] occurs in `text` (at most 64
 * words), found in one pass over the text however many words are asked; None when `text` is not
 * stored one byte a character (the caller then asks `in`). A word that is not one byte a
 * character cannot occur in such a text; the empty word occurs in every text.
 *
 * The pass tests a block of bytes at a time: where the CPU has AVX2 (`scan_nibbles`, 32 bytes),
 * each position's first three bytes against every wanted word at once (nibble tables, eight words
 * a group); else (16 bytes) with each wanted word's first two bytes (its first byte alone for a one-byte word), with GCC's
 * portable vector types where the compiler has them (`scan_blocks`). Only the positions where
 * some word could start are compared in full. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_WORDS 64
#define ALWAYS_INLINE inline __attribute__((always_inline))

typedef struct {
    const Py_UCS1 *word[MAX_WORDS];
    Py_ssize_t length[MAX_WORDS];
    uint64_t wanted, found;
} Words;

/* the wanted words that start at s[i] (of n bytes) are found: no longer wanted */
static inline void check_at(Words *w, const Py_UCS1 *s, Py_ssize_t n, Py_ssize_t i) {
    uint64_t m = w->wanted;
    while (m) {
        int j = __builtin_ctzll(m);
        uint64_t bit = m & -m;
        m ^= bit;
        Py_ssize_t len = w->length[j];
        if (s[i] == w->word[j][0] && len <= n - i && memcmp(s + i, w->word[j], (size_t)len) == 0) {
            w->found |= bit;
            w->wanted &= ~bit;
        }
    }
}

#if defined(__GNUC__)
typedef unsigned char Block __attribute__((vector_size(16)));

/* each wanted word's first byte and second byte (its first again for a one-byte word, compared
 * with the same position: the test then asks the first byte only) */
static Py_ssize_t scan_blocks(Words *w, const Py_UCS1 *s, Py_ssize_t n) {
    Block first[MAX_WORDS], second[MAX_WORDS];
    int shift[MAX_WORDS], active = 0;
    uint64_t listed = 0;
    Py_ssize_t i = 0;
    for (; i + 17 <= n && w->wanted; i += 16) {
        if (listed != w->wanted) {  /* the words still wanted, as blocks of their first bytes */
            active = 0;
            for (uint64_t m = w->wanted; m; m &= m - 1) {
                int j = __builtin_ctzll(m);
                int two = w->length[j] > 1;
                first[active] = (Block){0} + w->word[j][0];
                second[active] = (Block){0} + w->word[j][two];
                shift[active++] = two;
            }
            listed = w->wanted;
        }
        Block a, b, hit = {0};
        memcpy(&a, s + i, 16);
        memcpy(&b, s + i + 1, 16);
        for (int k = 0; k < active; k++)
            hit |= (Block)((a == first[k]) & ((shift[k] ? b : a) == second[k]));
        uint64_t halves[2];
        memcpy(halves, &hit, 16);
        if (halves[0] | halves[1]) {  /* some word may start in the block: at the lanes set */
            unsigned char lanes[16];
            memcpy(lanes, &hit, 16);
            for (int lane = 0; lane < 16; lane++)
                if (lanes[lane]) check_at(w, s, n, i + lane);
        }
    }
    return i;  /* where the bytes not yet looked at start */
}
#else
static Py_ssize_t scan_blocks(Words *w, const Py_UCS1 *s, Py_ssize_t n) { return 0; }
#endif

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define NIBBLE_PASS 1
#define GROUP 8 /* words a group's tables answer: one bit of a byte each */

/* The wanted words' first three bytes as nibble tables (a word shorter than three bytes matches
 * any byte where it has none): for the byte x at position p of a word, bit k of
 * lo[p][x & 15] & hi[p][x >> 4] is set exactly when x is that byte of the group's word k. */
typedef struct {
    __m128i lo[3], hi[3];
    int word[GROUP];
} Group;

static int make_groups(const Words *w, Group *groups) {
    unsigned char lo[MAX_WORDS / GROUP][3][16], hi[MAX_WORDS / GROUP][3][16];
    int count = 0, k = GROUP;
    for (uint64_t m = w->wanted; m; m &= m - 1) {
        int j = __builtin_ctzll(m);
        if (k == GROUP) {
            memset(lo[count], 0, sizeof lo[count]);
            memset(hi[count], 0, sizeof hi[count]);
            count++;
            k = 0;
        }
        unsigned char bit = (unsigned char)(1u << k);
        for (int p = 0; p < 3; p++) {
            if (p < w->length[j]) {
                lo[count - 1][p][w->word[j][p] & 15] |= bit;
                hi[count - 1][p][w->word[j][p] >> 4] |= bit;
            } else {  /* no byte here: any byte will do */
                for (int x = 0; x < 16; x++) {
                    lo[count - 1][p][x] |= bit;
                    hi[count - 1][p][x] |= bit;
                }
            }
        }
        groups[count - 1].word[k++] = j;
    }
    for (int g = 0; g < count; g++) {
        memcpy(groups[g].lo, lo[g], sizeof lo[g]);
        memcpy(groups[g].hi, hi[g], sizeof hi[g]);
    }
    return count;
}

#define AVX2 __attribute__((target("avx2")))
#define BLOCK 32 /* bytes a block: an AVX2 register */

/* the lanes of the block where the group's words may start (`*hit`: a bit per word at each lane,
 * set where word k's first three bytes stand there); the tables hold each 16-byte table twice,
 * as the shuffle reads each half of the register from its own half */
AVX2 static ALWAYS_INLINE unsigned group_lanes(const __m256i *t, __m256i la, __m256i ha, __m256i lb, __m256i hb,
                                               __m256i lc, __m256i hc, __m256i *hit) {
    __m256i h = _mm256_and_si256(_mm256_shuffle_epi8(t[0], la), _mm256_shuffle_epi8(t[3], ha));
    h = _mm256_and_si256(h, _mm256_and_si256(_mm256_shuffle_epi8(t[1], lb), _mm256_shuffle_epi8(t[4], hb)));
    h = _mm256_and_si256(h, _mm256_and_si256(_mm256_shuffle_epi8(t[2], lc), _mm256_shuffle_epi8(t[5], hc)));
    *hit = h;
    return ~(unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(h, _mm256_setzero_si256()));
}

/* the group's words that start at the `lanes` of the block at `i` (`bits`: each lane's words) are found */
static void check_lanes(Words *w, const Py_UCS1 *s, Py_ssize_t n, Py_ssize_t i, const Group *g, unsigned lanes,
                        const unsigned char *bits) {
    for (; lanes; lanes &= lanes - 1) {
        int lane = __builtin_ctz(lanes);
        for (unsigned m = bits[lane]; m; m &= m - 1) {
            int j = g->word[__builtin_ctz(m)];
            uint64_t bit = (uint64_t)1 << j;
            Py_ssize_t at = i + lane;
            if ((w->wanted & bit) && w->length[j] <= n - at && memcmp(s + at, w->word[j], (size_t)w->length[j]) == 0) {
                w->found |= bit;
                w->wanted &= ~bit;
            }
        }
    }
}

/* the nibbles of the block at `p`: low in *lo, high in *hi */
AVX2 static ALWAYS_INLINE void nibbles(const Py_UCS1 *p, __m256i *lo, __m256i *hi) {
    const __m256i low = _mm256_set1_epi8(15);
    __m256i x = _mm256_loadu_si256((const __m256i *)p);
    *lo = _mm256_and_si256(x, low);
    *hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), low);
}

/* the blocks from `i` while the words wanted stay those of `groups` (`ngroups` a constant where
 * inlined: one group's tables then stay in registers): where the next block starts */
AVX2 static ALWAYS_INLINE Py_ssize_t scan_groups(Words *w, const Py_UCS1 *s, Py_ssize_t n, Py_ssize_t i,
                                                 const Group *groups, int ngroups) {
    const uint64_t listed = w->wanted;
    __m256i tables[MAX_WORDS / GROUP][6];  /* locals, not `groups`' memory: kept in registers where they fit */
    for (int g = 0; g < ngroups; g++)
        for (int p = 0; p < 3; p++) {
            tables[g][p] = _mm256_broadcastsi128_si256(groups[g].lo[p]);
            tables[g][p + 3] = _mm256_broadcastsi128_si256(groups[g].hi[p]);
        }
    for (; i + BLOCK + 2 <= n; i += BLOCK) {
        __m256i la, ha, lb, hb, lc, hc;
        nibbles(s + i, &la, &ha);
        nibbles(s + i + 1, &lb, &hb);
        nibbles(s + i + 2, &lc, &hc);
        int changed = 0;
        for (int g = 0; g < ngroups; g++) {
            __m256i hit;
            unsigned lanes = group_lanes(tables[g], la, ha, lb, hb, lc, hc, &hit);
            if (lanes) {
                unsigned char bits[BLOCK];
                _mm256_storeu_si256((__m256i *)bits, hit);
                check_lanes(w, s, n, i, &groups[g], lanes, bits);
                changed = w->wanted != listed;
            }
        }
        if (changed) return i + BLOCK;  /* the block is done; the tables no longer fit the words */
    }
    return i;
}

/* `scan_blocks` with AVX2's byte shuffle (the CPU is asked once, `literals_in`): each block's
 * test is the same few instructions however many words (up to eight) a group holds, where the
 * comparisons of `scan_blocks` cost a few per word; only the words whose first three bytes stand
 * at a lane are compared there. */
AVX2 static Py_ssize_t scan_nibbles(Words *w, const Py_UCS1 *s, Py_ssize_t n) {
    Group groups[MAX_WORDS / GROUP];
    Py_ssize_t i = 0;
    while (i + BLOCK + 2 <= n && w->wanted) {
        int ngroups = make_groups(w, groups);
        i = ngroups == 1 ? scan_groups(w, s, n, i, groups, 1) : scan_groups(w, s, n, i, groups, ngroups);
    }
    return i;  /* where the bytes not yet looked at start */
}

/* 1 where the CPU has AVX2 (asked once) */
static int has_avx2(void) {
    static int known = -1;
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    return known;
}
#endif

PyObject *musify_claunch_literals_in(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *words;
    int simd = 1;  /* 0: the portable pass even where the CPU has AVX2 (the tests read both) */
    if (!PyArg_ParseTuple(args, "UO!|p:literals_in", &text, &PyTuple_Type, &words, &simd)) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(words);
    if (count > MAX_WORDS) {
        PyErr_SetString(PyExc_ValueError, "literals_in: at most 64 words");
        return NULL;
    }
    Words w;
    w.wanted = w.found = 0;
    for (Py_ssize_t j = 0; j < count; j++) {
        PyObject *item = PyTuple_GET_ITEM(words, j);
        if (!PyUnicode_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "literals_in: words must be strings");
            return NULL;
        }
        uint64_t bit = (uint64_t)1 << j;
        w.length[j] = PyUnicode_GET_LENGTH(item);
        w.word[j] = NULL;
        if (w.length[j] == 0) {
            w.found |= bit;  /* "" in text */
        } else if (PyUnicode_KIND(item) == PyUnicode_1BYTE_KIND) {
            w.word[j] = PyUnicode_1BYTE_DATA(item);
            w.wanted |= bit;
        }  /* else: a character over U+00FF, in no one-byte text */
    }
    if (PyUnicode_KIND(text) != PyUnicode_1BYTE_KIND) Py_RETURN_NONE;
    const Py_UCS1 *s = PyUnicode_1BYTE_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
#ifdef NIBBLE_PASS
    Py_ssize_t from = simd && has_avx2() ? scan_nibbles(&w, s, n) : scan_blocks(&w, s, n);
#else
    Py_ssize_t from = scan_blocks(&w, s, n);
#endif
    for (Py_ssize_t i = from; i < n && w.wanted; i++) check_at(&w, s, n, i);
    return PyLong_FromUnsignedLongLong(w.found);
}
