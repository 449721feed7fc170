// Atomic functions. Device memory is host memory shared by the OS threads that run blocks, so
// every atomic is a real hardware atomic (the __atomic builtins); the _block and _system
// variants are the same operations, which is at least as strong as CUDA asks.
#pragma once
#include <cstring>
#include <type_traits>

namespace emu {

template <class T, class F>
T atomic_update(T* address, F update) {
    using Bits = std::conditional_t<sizeof(T) == 8, unsigned long long,
                                    std::conditional_t<sizeof(T) == 4, unsigned, unsigned short>>;
    static_assert(sizeof(T) == sizeof(Bits), "atomic on a type of unsupported size");
    Bits* p = reinterpret_cast<Bits*>(address);
    Bits old_bits = __atomic_load_n(p, __ATOMIC_RELAXED);
    for (;;) {
        T old_value;
        std::memcpy(&old_value, &old_bits, sizeof(T));
        T new_value = update(old_value);
        Bits new_bits;
        std::memcpy(&new_bits, &new_value, sizeof(T));
        if (__atomic_compare_exchange_n(p, &old_bits, new_bits, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
            return old_value;
    }
}

}  // namespace emu

#define EMU_ATOMIC_INT_OPS(T)                                                                         \
    inline T atomicAdd(T* a, T v) { return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST); }              \
    inline T atomicExch(T* a, T v) { return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST); }            \
    inline T atomicMin(T* a, T v) { return emu::atomic_update(a, [v](T o) { return v < o ? v : o; }); } \
    inline T atomicMax(T* a, T v) { return emu::atomic_update(a, [v](T o) { return v > o ? v : o; }); } \
    inline T atomicAnd(T* a, T v) { return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST); }              \
    inline T atomicOr(T* a, T v) { return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST); }                \
    inline T atomicXor(T* a, T v) { return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST); }              \
    inline T atomicCAS(T* a, T compare, T v) {                                                        \
        __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);       \
        return compare;                                                                               \
    }

EMU_ATOMIC_INT_OPS(int)
EMU_ATOMIC_INT_OPS(unsigned int)
EMU_ATOMIC_INT_OPS(unsigned long long int)
EMU_ATOMIC_INT_OPS(long long int)
#undef EMU_ATOMIC_INT_OPS

inline int atomicSub(int* a, int v) { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); }
inline unsigned int atomicSub(unsigned int* a, unsigned int v) { return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST); }
inline unsigned long long atomicSub(unsigned long long* a, unsigned long long v) {
    return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);
}
// 16-bit compare-and-swap (CUDA 12 on sm_70 and newer).
inline unsigned short int atomicCAS(unsigned short int* a, unsigned short int compare, unsigned short int v) {
    __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return compare;
}
inline float atomicAdd(float* a, float v) { return emu::atomic_update(a, [v](float o) { return o + v; }); }
inline double atomicAdd(double* a, double v) { return emu::atomic_update(a, [v](double o) { return o + v; }); }
inline float atomicExch(float* a, float v) { return emu::atomic_update(a, [v](float) { return v; }); }
// ((old >= limit) ? 0 : old + 1), as CUDA defines it.
inline unsigned int atomicInc(unsigned int* a, unsigned int limit) {
    return emu::atomic_update(a, [limit](unsigned o) { return o >= limit ? 0u : o + 1; });
}
// ((old == 0) || (old > limit)) ? limit : old - 1.
inline unsigned int atomicDec(unsigned int* a, unsigned int limit) {
    return emu::atomic_update(a, [limit](unsigned o) { return (o == 0 || o > limit) ? limit : o - 1; });
}

// The scoped variants: same operation, same (sequentially consistent) ordering.
#define EMU_ATOMIC_SCOPED(name)                                                               \
    template <class... A>                                                                     \
    inline auto name##_block(A... a) -> decltype(name(a...)) { return name(a...); }           \
    template <class... A>                                                                     \
    inline auto name##_system(A... a) -> decltype(name(a...)) { return name(a...); }
EMU_ATOMIC_SCOPED(atomicAdd)
EMU_ATOMIC_SCOPED(atomicSub)
EMU_ATOMIC_SCOPED(atomicExch)
EMU_ATOMIC_SCOPED(atomicMin)
EMU_ATOMIC_SCOPED(atomicMax)
EMU_ATOMIC_SCOPED(atomicAnd)
EMU_ATOMIC_SCOPED(atomicOr)
EMU_ATOMIC_SCOPED(atomicXor)
EMU_ATOMIC_SCOPED(atomicCAS)
EMU_ATOMIC_SCOPED(atomicInc)
EMU_ATOMIC_SCOPED(atomicDec)
#undef EMU_ATOMIC_SCOPED
