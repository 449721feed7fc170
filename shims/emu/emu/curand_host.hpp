// cuRAND's host API over the device generators of curand_device.hpp.
//
// A generator is one XORWOW or Philox state, initialised from (seed, subsequence 0, offset) when the first
// numbers are asked for after a seed or offset change, and drawn from sequentially by every Generate call.
// Device memory is host memory and streams are synchronous, so output pointers are written directly.
// Reading: cuRAND's own host library spreads a request over many GPU threads' subsequences, so its order
// of numbers is not this sequential order; the emulator keeps every distribution, argument check and status
// code, and the same numbers on both faces (docs/emulator-numerics.md).
#pragma once

#include <cstddef>

#include "curand_device.hpp"

namespace emu::rand {

enum Status {
    STATUS_SUCCESS = 0,
    STATUS_VERSION_MISMATCH = 100,
    STATUS_NOT_INITIALIZED = 101,
    STATUS_ALLOCATION_FAILED = 102,
    STATUS_TYPE_ERROR = 103,
    STATUS_OUT_OF_RANGE = 104,
    STATUS_LENGTH_NOT_MULTIPLE = 105,
    STATUS_DOUBLE_PRECISION_REQUIRED = 106,
    STATUS_LAUNCH_FAILURE = 201,
    STATUS_PREEXISTING_FAILURE = 202,
    STATUS_INITIALIZATION_FAILED = 203,
    STATUS_ARCH_MISMATCH = 204,
    STATUS_INTERNAL_ERROR = 999,
};

enum RngType {
    RNG_TEST = 1,
    RNG_PSEUDO_DEFAULT = 100,
    RNG_PSEUDO_XORWOW = 101,
    RNG_PSEUDO_MRG32K3A = 121,
    RNG_PSEUDO_MTGP32 = 141,
    RNG_PSEUDO_MT19937 = 142,
    RNG_PSEUDO_PHILOX4_32_10 = 161,
    RNG_QUASI_DEFAULT = 200,
    RNG_QUASI_SOBOL32 = 201,
    RNG_QUASI_SCRAMBLED_SOBOL32 = 202,
    RNG_QUASI_SOBOL64 = 203,
    RNG_QUASI_SCRAMBLED_SOBOL64 = 204,
};

enum Ordering {
    ORDERING_PSEUDO_BEST = 100,
    ORDERING_PSEUDO_DEFAULT = 101,
    ORDERING_PSEUDO_SEEDED = 102,
    ORDERING_PSEUDO_LEGACY = 103,
    ORDERING_PSEUDO_DYNAMIC = 104,
    ORDERING_QUASI_DEFAULT = 201,
};

struct Generator {
    RngType type;
    bool host_generator;
    unsigned long long seed = 0;
    unsigned long long offset = 0;
    Ordering ordering = ORDERING_PSEUDO_DEFAULT;
    void* stream = nullptr;
    bool seeded = false;  // states below are current for (seed, offset)
    XorwowState xorwow{};
    PhiloxState philox{};
};
using GeneratorHandle = Generator*;

inline Status create(GeneratorHandle* out, int type, bool host) {
    if (out == nullptr) return STATUS_NOT_INITIALIZED;
    if (type == RNG_PSEUDO_DEFAULT) type = RNG_PSEUDO_XORWOW;
    if (type != RNG_PSEUDO_XORWOW && type != RNG_PSEUDO_PHILOX4_32_10) return STATUS_TYPE_ERROR;
    *out = new Generator{static_cast<RngType>(type), host};
    return STATUS_SUCCESS;
}
inline Status destroy(GeneratorHandle g) {
    if (g == nullptr) return STATUS_NOT_INITIALIZED;
    delete g;
    return STATUS_SUCCESS;
}
inline Status set_seed(GeneratorHandle g, unsigned long long seed) {
    if (g == nullptr) return STATUS_NOT_INITIALIZED;
    g->seed = seed;
    g->seeded = false;
    return STATUS_SUCCESS;
}
inline Status set_offset(GeneratorHandle g, unsigned long long offset) {
    if (g == nullptr) return STATUS_NOT_INITIALIZED;
    g->offset = offset;
    g->seeded = false;
    return STATUS_SUCCESS;
}
inline Status set_ordering(GeneratorHandle g, int ordering) {
    if (g == nullptr) return STATUS_NOT_INITIALIZED;
    if (ordering < ORDERING_PSEUDO_BEST || ordering > ORDERING_PSEUDO_DYNAMIC) return STATUS_OUT_OF_RANGE;
    g->ordering = static_cast<Ordering>(ordering);
    return STATUS_SUCCESS;
}
inline Status seed_states(GeneratorHandle g) {
    if (g == nullptr) return STATUS_NOT_INITIALIZED;
    if (!g->seeded) {
        init(g->seed, 0, g->offset, &g->xorwow);
        init(g->seed, 0, g->offset, &g->philox);
        g->seeded = true;
    }
    return STATUS_SUCCESS;
}

// Runs `fill(state)` on the generator's current state after the common checks; `pairs` asks for an even
// count (the normal distributions are produced in Box-Muller pairs).
template <class Fill>
inline Status generate(GeneratorHandle g, const void* out, std::size_t n, bool pairs, Fill fill) {
    if (g == nullptr) return STATUS_NOT_INITIALIZED;
    if (out == nullptr && n != 0) return STATUS_LAUNCH_FAILURE;
    if (pairs && n % 2 != 0) return STATUS_LENGTH_NOT_MULTIPLE;
    seed_states(g);
    if (g->type == RNG_PSEUDO_PHILOX4_32_10) {
        fill(&g->philox);
    } else {
        fill(&g->xorwow);
    }
    return STATUS_SUCCESS;
}

inline Status generate_bits(GeneratorHandle g, unsigned int* out, std::size_t n) {
    return generate(g, out, n, false, [&](auto* s) { for (std::size_t i = 0; i < n; ++i) out[i] = next(s); });
}
template <class T>
inline Status generate_uniform(GeneratorHandle g, T* out, std::size_t n) {
    return generate(g, out, n, false, [&](auto* s) {
        for (std::size_t i = 0; i < n; ++i) out[i] = std::is_same_v<T, float> ? T(uniform(s)) : T(uniform_double(s));
    });
}
// Normal (log_normal false) or log-normal values with the given mean and standard deviation, drawn as
// Box-Muller pairs in order.
template <class T>
inline Status generate_normal(GeneratorHandle g, T* out, std::size_t n, T mean, T stddev, bool log_normal) {
    return generate(g, out, n, true, [&](auto* s) {
        for (std::size_t i = 0; i < n; i += 2) {
            T pair[2];
            if constexpr (std::is_same_v<T, float>) {
                const float2 v = normal2(s);
                pair[0] = v.x, pair[1] = v.y;
            } else {
                const double2 v = normal2_double(s);
                pair[0] = v.x, pair[1] = v.y;
            }
            for (int k = 0; k < 2; ++k) {
                const T x = mean + stddev * pair[k];
                out[i + k] = log_normal ? std::exp(x) : x;
            }
        }
    });
}
inline Status generate_poisson(GeneratorHandle g, unsigned int* out, std::size_t n, double lambda) {
    if (!(lambda > 0)) return STATUS_OUT_OF_RANGE;
    return generate(g, out, n, false, [&](auto* s) { for (std::size_t i = 0; i < n; ++i) out[i] = poisson(s, lambda); });
}

}  // namespace emu::rand
