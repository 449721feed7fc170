// cuRAND's device API: XORWOW and Philox4x32-10, bit-exact in the integer streams.
//
// XORWOW (Marsaglia's xorshift with a Weyl sequence) steps exactly as cuRAND does, and curand_init places
// the state as cuRAND does: the seed is salted and mixed into the six words, then the state is advanced by
// `offset` steps and `subsequence` * 2^67 steps.  The advance is the real thing: the xorshift part is a
// linear map M over GF(2)^160, so skipping n steps applies M^n, built from a table of M^(2^k) (k < 131)
// computed once per process by repeated squaring; the Weyl word advances by 362437 * n.  Philox4x32-10 is
// Salmon et al.'s counter-based generator (SC'11) with cuRAND's state layout: a 128-bit counter whose upper
// half is the subsequence, four outputs per counter, and `STATE` pointing at the next unused output.
//
// Floating-point outputs use cuRAND's formulas (x * 2^-32 + 2^-33 for floats, a 53-bit hq form for
// doubles, Box-Muller with one cached value) with nvcc's default contraction of a*b+c into fma; normals
// call libm's logf/sinf/cosf where the GPU uses its own approximations, so they agree to a few ulps rather
// than bit for bit (docs/emulator-numerics.md).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "vector.hpp"

namespace emu::rand {

struct XorwowState {
    unsigned int d, v[5];
    int boxmuller_flag;
    int boxmuller_flag_double;
    float boxmuller_extra;
    double boxmuller_extra_double;
};

struct PhiloxState {
    uint4 ctr;
    uint4 output;
    uint2 key;
    unsigned int STATE;
    int boxmuller_flag;
    int boxmuller_flag_double;
    float boxmuller_extra;
    double boxmuller_extra_double;
};

template <class S>
using if_state = std::enable_if_t<std::is_same_v<S, XorwowState> || std::is_same_v<S, PhiloxState>>;

// cuRAND's conversion constants, spelled as cuRAND spells them (2.3283064e-10f is not exactly 2^-32).
constexpr float k2pow32Inv = 2.3283064e-10f;
constexpr float k2pow32Inv2Pi = 2.3283064e-10f * 6.2831855f;
constexpr double k2pow32InvDouble = 2.3283064365386963e-10;
constexpr double k2pow53InvDouble = 1.1102230246251565e-16;
constexpr double k2pow53Inv2PiDouble = 1.1102230246251565e-16 * 6.2831853071795860;
constexpr unsigned int kWeyl = 362437;
constexpr int kSequenceLog2 = 67;  // XORWOW subsequences are 2^67 steps apart

// ---- XORWOW --------------------------------------------------------------------------------------------
inline unsigned int next(XorwowState* s) {
    const unsigned int t = s->v[0] ^ (s->v[0] >> 2);
    s->v[0] = s->v[1];
    s->v[1] = s->v[2];
    s->v[2] = s->v[3];
    s->v[3] = s->v[4];
    s->v[4] = (s->v[4] ^ (s->v[4] << 4)) ^ (t ^ (t << 1));
    s->d += kWeyl;
    return s->v[4] + s->d;
}

// A 160x160 matrix over GF(2), stored by columns: col[j] is the image of basis vector j.
struct BitMatrix {
    unsigned int col[160][5];
    void apply(const unsigned int in[5], unsigned int out[5]) const {
        unsigned int r[5] = {0, 0, 0, 0, 0};
        for (int j = 0; j < 160; ++j) {
            if ((in[j >> 5] >> (j & 31)) & 1u) {
                for (int w = 0; w < 5; ++w) r[w] ^= col[j][w];
            }
        }
        for (int w = 0; w < 5; ++w) out[w] = r[w];
    }
};

// The same map as 40 lookup tables, one per 4-bit nibble of the input: applying it is 40 table reads
// instead of 160 conditional column sums, which is what makes curand_init(seed, tid, ...) cheap enough
// for a kernel that initialises one state per thread.
struct NibbleMatrix {
    unsigned int t[40][16][5];
    void build(const BitMatrix& m) {
        for (int nib = 0; nib < 40; ++nib) {
            for (int w = 0; w < 5; ++w) t[nib][0][w] = 0;
            for (int v = 1; v < 16; ++v) {
                const int low = __builtin_ctz(v);
                for (int w = 0; w < 5; ++w) t[nib][v][w] = t[nib][v & (v - 1)][w] ^ m.col[nib * 4 + low][w];
            }
        }
    }
    void apply(unsigned int v[5]) const {
        unsigned int r[5] = {0, 0, 0, 0, 0};
        for (int nib = 0; nib < 40; ++nib) {
            const unsigned int* e = t[nib][(v[nib >> 3] >> ((nib & 7) * 4)) & 15u];
            for (int w = 0; w < 5; ++w) r[w] ^= e[w];
        }
        for (int w = 0; w < 5; ++w) v[w] = r[w];
    }
};

// M^(2^k) for k = 0..130: enough for offsets below 2^64 and subsequences below 2^64 (2^67 * 2^63).
struct XorwowPowers {
    static constexpr int kCount = kSequenceLog2 + 64;
    NibbleMatrix pow2[kCount];
    XorwowPowers() {
        BitMatrix cur, next_power;
        for (int j = 0; j < 160; ++j) {  // one step applied to each basis vector
            XorwowState s{};
            s.v[j >> 5] = 1u << (j & 31);
            next(&s);
            for (int w = 0; w < 5; ++w) cur.col[j][w] = s.v[w];
        }
        for (int k = 0; k < kCount; ++k) {
            pow2[k].build(cur);
            for (int j = 0; j < 160; ++j) cur.apply(cur.col[j], next_power.col[j]);  // square
            cur = next_power;
        }
    }
    static const XorwowPowers& get() {
        static const XorwowPowers* table = new XorwowPowers();  // built once (about 1.7 MB), never destroyed
        return *table;
    }
};

// Applies M^(n * 2^first_power) to the xorshift words.
inline void advance_xorshift(XorwowState* s, unsigned long long n, int first_power) {
    const XorwowPowers& p = XorwowPowers::get();
    for (int k = 0; n != 0; ++k, n >>= 1) {
        if (n & 1u) p.pow2[first_power + k].apply(s->v);
    }
}

inline void skipahead(unsigned long long n, XorwowState* s) {
    advance_xorshift(s, n, 0);
    s->d += kWeyl * static_cast<unsigned int>(n);
}
// 2^67 * n steps: the Weyl word's advance is a multiple of 2^32, i.e. nothing.
inline void skipahead_sequence(unsigned long long n, XorwowState* s) { advance_xorshift(s, n, kSequenceLog2); }

inline void init(unsigned long long seed, unsigned long long subsequence, unsigned long long offset, XorwowState* s) {
    const unsigned int s0 = static_cast<unsigned int>(seed) ^ 0xaad26b49u;
    const unsigned int s1 = static_cast<unsigned int>(seed >> 32) ^ 0xf7dcefddu;
    const unsigned int t0 = 1099087573u * s0;
    const unsigned int t1 = 2591861531u * s1;
    s->d = 6615241u + t1 + t0;
    s->v[0] = 123456789u + t0;
    s->v[1] = 362436069u ^ t0;
    s->v[2] = 521288629u + t1;
    s->v[3] = 88675123u ^ t1;
    s->v[4] = 5783321u + t0;
    skipahead_sequence(subsequence, s);
    skipahead(offset, s);
    s->boxmuller_flag = 0;
    s->boxmuller_flag_double = 0;
    s->boxmuller_extra = 0.0f;
    s->boxmuller_extra_double = 0.0;
}

// ---- Philox4x32-10 -------------------------------------------------------------------------------------
inline uint4 philox4x32_10(uint4 c, uint2 k) {
    for (int round = 0; round < 10; ++round) {
        const unsigned long long p0 = 0xD2511F53ull * c.x;
        const unsigned long long p1 = 0xCD9E8D57ull * c.z;
        const unsigned int hi0 = static_cast<unsigned int>(p0 >> 32), lo0 = static_cast<unsigned int>(p0);
        const unsigned int hi1 = static_cast<unsigned int>(p1 >> 32), lo1 = static_cast<unsigned int>(p1);
        c = make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
        k.x += 0x9E3779B9u;
        k.y += 0xBB67AE85u;
    }
    return c;
}

inline unsigned __int128 counter_of(const PhiloxState* s) {
    return (static_cast<unsigned __int128>(s->ctr.w) << 96) | (static_cast<unsigned __int128>(s->ctr.z) << 64) |
           (static_cast<unsigned __int128>(s->ctr.y) << 32) | s->ctr.x;
}
inline void set_counter(PhiloxState* s, unsigned __int128 c) {
    s->ctr = make_uint4(static_cast<unsigned int>(c), static_cast<unsigned int>(c >> 32),
                        static_cast<unsigned int>(c >> 64), static_cast<unsigned int>(c >> 96));
}
inline void advance_counter(PhiloxState* s, unsigned __int128 by) {
    set_counter(s, counter_of(s) + by);
    s->output = philox4x32_10(s->ctr, s->key);
}

inline unsigned int next(PhiloxState* s) {
    const unsigned int out[4] = {s->output.x, s->output.y, s->output.z, s->output.w};
    const unsigned int r = out[s->STATE & 3];
    if (++s->STATE == 4) {
        s->STATE = 0;
        advance_counter(s, 1);
    }
    return r;
}
// Four consecutive outputs, starting at the next unused one.
inline uint4 next4(PhiloxState* s) {
    const uint4 a = s->output;
    advance_counter(s, 1);
    const uint4 b = s->output;
    const unsigned int all[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
    const unsigned int i = s->STATE;
    return make_uint4(all[i], all[i + 1], all[i + 2], all[i + 3]);
}
inline void skipahead(unsigned long long n, PhiloxState* s) {
    unsigned int state = s->STATE + static_cast<unsigned int>(n & 3);
    unsigned long long blocks = n / 4;
    if (state > 3) {
        blocks += 1;
        state -= 4;
    }
    s->STATE = state;
    advance_counter(s, blocks);
}
inline void skipahead_sequence(unsigned long long n, PhiloxState* s) {
    advance_counter(s, static_cast<unsigned __int128>(n) << 64);
}
inline void init(unsigned long long seed, unsigned long long subsequence, unsigned long long offset, PhiloxState* s) {
    s->ctr = make_uint4(0, 0, 0, 0);
    s->key = make_uint2(static_cast<unsigned int>(seed), static_cast<unsigned int>(seed >> 32));
    s->STATE = 0;
    s->boxmuller_flag = 0;
    s->boxmuller_flag_double = 0;
    s->boxmuller_extra = 0.0f;
    s->boxmuller_extra_double = 0.0;
    s->output = philox4x32_10(s->ctr, s->key);
    skipahead_sequence(subsequence, s);
    skipahead(offset, s);
}

// ---- distributions -------------------------------------------------------------------------------------
inline float to_uniform(unsigned int x) { return std::fma(static_cast<float>(x), k2pow32Inv, k2pow32Inv / 2.0f); }
inline double to_uniform_double(unsigned int x, unsigned int y) {
    const unsigned long long z = static_cast<unsigned long long>(x) ^ (static_cast<unsigned long long>(y) << (53 - 32));
    return std::fma(static_cast<double>(z), k2pow53InvDouble, k2pow53InvDouble / 2.0);
}
inline float2 box_muller(unsigned int x, unsigned int y) {
    const float u = std::fma(static_cast<float>(x), k2pow32Inv, k2pow32Inv / 2.0f);
    const float v = std::fma(static_cast<float>(y), k2pow32Inv2Pi, k2pow32Inv2Pi / 2.0f);
    const float s = std::sqrt(-2.0f * std::log(u));
    return make_float2(std::sin(v) * s, std::cos(v) * s);
}
inline double2 box_muller_double(unsigned int x0, unsigned int x1, unsigned int y0, unsigned int y1) {
    const unsigned long long zx = static_cast<unsigned long long>(x0) ^ (static_cast<unsigned long long>(x1) << (53 - 32));
    const unsigned long long zy = static_cast<unsigned long long>(y0) ^ (static_cast<unsigned long long>(y1) << (53 - 32));
    const double u = std::fma(static_cast<double>(zx), k2pow53InvDouble, k2pow53InvDouble / 2.0);
    const double v = std::fma(static_cast<double>(zy), k2pow53Inv2PiDouble, k2pow53Inv2PiDouble / 2.0);
    const double s = std::sqrt(-2.0 * std::log(u));
    return make_double2(std::sin(v) * s, std::cos(v) * s);
}

template <class S>
inline float uniform(S* s) { return to_uniform(next(s)); }
template <class S>
inline double uniform_double(S* s) {
    const unsigned int x = next(s);
    const unsigned int y = next(s);
    return to_uniform_double(x, y);
}
inline float4 uniform4(PhiloxState* s) {
    const uint4 r = next4(s);
    return make_float4(to_uniform(r.x), to_uniform(r.y), to_uniform(r.z), to_uniform(r.w));
}
inline double2 uniform2_double(PhiloxState* s) {
    const uint4 r = next4(s);
    return make_double2(to_uniform_double(r.x, r.y), to_uniform_double(r.z, r.w));
}
inline double4 uniform4_double(PhiloxState* s) {
    const double2 a = uniform2_double(s), b = uniform2_double(s);
    return make_double4(a.x, a.y, b.x, b.y);
}

template <class S>
inline float2 normal2(S* s) {
    const unsigned int x = next(s);
    const unsigned int y = next(s);
    return box_muller(x, y);
}
// One normal at a time: the second value of each Box-Muller pair is kept for the next call.
template <class S>
inline float normal(S* s) {
    if (s->boxmuller_flag != 1) {
        const float2 v = normal2(s);
        s->boxmuller_extra = v.y;
        s->boxmuller_flag = 1;
        return v.x;
    }
    s->boxmuller_flag = 0;
    return s->boxmuller_extra;
}
inline float4 normal4(PhiloxState* s) {
    const uint4 r = next4(s);
    const float2 a = box_muller(r.x, r.y), b = box_muller(r.z, r.w);
    return make_float4(a.x, a.y, b.x, b.y);
}
inline double2 normal2_double(XorwowState* s) {
    const unsigned int x0 = next(s), x1 = next(s), y0 = next(s), y1 = next(s);
    return box_muller_double(x0, x1, y0, y1);
}
inline double2 normal2_double(PhiloxState* s) {
    const uint4 r = next4(s);
    return box_muller_double(r.x, r.y, r.z, r.w);
}
inline double4 normal4_double(PhiloxState* s) {
    const double2 a = normal2_double(s), b = normal2_double(s);
    return make_double4(a.x, a.y, b.x, b.y);
}
template <class S>
inline double normal_double(S* s) {
    if (s->boxmuller_flag_double != 1) {
        const double2 v = normal2_double(s);
        s->boxmuller_extra_double = v.y;
        s->boxmuller_flag_double = 1;
        return v.x;
    }
    s->boxmuller_flag_double = 0;
    return s->boxmuller_extra_double;
}

// Poisson: Knuth's product of uniforms below lambda = 64, Hoermann's PTRS transformed rejection above
// (W. Hoermann, "The transformed rejection method for generating Poisson random variables", 1993).  The
// distribution is exact; the draws are not cuRAND's (docs/emulator-numerics.md).
template <class S>
inline unsigned int poisson(S* s, double lambda) {
    if (!(lambda > 0)) return 0;
    if (lambda < 64) {
        const double limit = std::exp(-lambda);
        unsigned int k = 0;
        double p = uniform_double(s);
        while (p > limit) {
            ++k;
            p *= uniform_double(s);
        }
        return k;
    }
    const double slam = std::sqrt(lambda), loglam = std::log(lambda);
    const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
        const double u = uniform_double(s) - 0.5, v = uniform_double(s);
        const double us = 0.5 - std::fabs(u);
        const double k = std::floor((2 * a / us + b) * u + lambda + 0.43);
        if (us >= 0.07 && v <= vr) return static_cast<unsigned int>(k);
        if (k < 0 || (us < 0.013 && v > us)) continue;
        if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <=
            -lambda + k * loglam - std::lgamma(k + 1)) {
            return static_cast<unsigned int>(k);
        }
    }
}

}  // namespace emu::rand

// skipahead/skipahead_sequence keep their names on both faces (MUSA_FACTS §1 lists no rename).
template <class S, class = emu::rand::if_state<S>>
inline void skipahead(unsigned long long n, S* state) { emu::rand::skipahead(n, state); }
template <class S, class = emu::rand::if_state<S>>
inline void skipahead_sequence(unsigned long long n, S* state) { emu::rand::skipahead_sequence(n, state); }
