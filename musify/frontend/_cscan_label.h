/* The scanner's second pass (scanner.py `_label_identifiers`): the candidate identifiers, words
 * that start with one of the prefixes, each with its context from the first pass's spans and
 * directives, as rows of an `IdentList` and the distinct names.
 *
 * A part of `_cscan.c`, included once there after `_cscan_lex.h` (whose output types it reads),
 * not a header for other files: `scan_kind` inlines it into one copy per string kind. */
#ifndef MUSIFY_CSCAN_LABEL_H
#define MUSIFY_CSCAN_LABEL_H

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
    o->contexts |= 1u << ctx;
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

#endif
