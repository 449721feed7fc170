/* `literals.holds` for every registered word at once (musify/passes/literals.py is the
 * reference: a plain `word in text` per word); part of the `_claunch` extension.
 * tests/test_literals.py proves both give the same answers on generated inputs.
 *
 * literals_in(text, words) -> int | None: bit i set when words[i] occurs in `text` (at most 64
 * words), found in one pass over the text however many words are asked; None when `text` is not
 * stored one byte a character (the caller then asks `in`). A word that is not one byte a
 * character cannot occur in such a text; the empty word occurs in every text.
 *
 * The pass compares 16 bytes at a time with each wanted word's first two bytes (its first byte
 * alone for a one-byte word), with GCC's portable vector types where the compiler has them; only
 * a block where some word could start is looked at byte by byte. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MAX_WORDS 64

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

PyObject *musify_claunch_literals_in(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *text, *words;
    if (!PyArg_ParseTuple(args, "UO!:literals_in", &text, &PyTuple_Type, &words)) return NULL;
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
    for (Py_ssize_t i = scan_blocks(&w, s, n); i < n && w.wanted; i++) check_at(&w, s, n, i);
    return PyLong_FromUnsignedLongLong(w.found);
}
