/* How many of n bytes are '\n', sixteen compared at once where SSE2 is there (every x86-64): shared
 * by the extensions that count lines (`_crecord`'s line_count, `_cscan`'s named_positions) so the
 * one vector loop is written once. Each lane's count is kept under 256 by summing the lanes every
 * 255 blocks. */
#ifndef MUSIFY_CNEWLINES_H
#define MUSIFY_CNEWLINES_H
#include <Python.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline Py_ssize_t musify_newlines_1(const unsigned char *p, Py_ssize_t n) {
    Py_ssize_t count = 0, i = 0;
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (n - i >= 16) {
        Py_ssize_t blocks = (n - i) / 16;
        if (blocks > 255) blocks = 255;
        __m128i acc = zero;
        for (Py_ssize_t b = 0; b < blocks; b++, i += 16)
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i)), nl));
        __m128i sums = _mm_sad_epu8(acc, zero);
        count += _mm_cvtsi128_si32(sums) + _mm_cvtsi128_si32(_mm_srli_si128(sums, 8));
    }
#endif
    for (; i < n; i++) count += p[i] == '\n';
    return count;
}

#endif
