// Build settings and the CUDA/MUSA keyword macros of the emulator.
//
// The emulator compiles host and device code in one g++/clang++ pass, so the kernel keywords
// are plain C++: __global__/__device__/__host__ vanish, __shared__ becomes thread_local (one OS
// thread runs one block at a time, so a thread_local is exactly per-block storage), and the
// launch syntax is rewritten by musify/emu/rewrite.py before compiling.
#pragma once
#include <cstddef>
#include <cstdint>

#ifndef EMU_WARP_SIZE
#define EMU_WARP_SIZE 32
#endif
#if EMU_WARP_SIZE != 32 && EMU_WARP_SIZE != 64 && EMU_WARP_SIZE != 128
#error "EMU_WARP_SIZE must be 32, 64 or 128"
#endif
// EMU_ARCH: 800 for sm_80, 210/220/310 for mp_21/mp_22/mp_31. Only device properties read it,
// unless EMU_DEFINE_ARCH_MACRO asks the face to define __CUDA_ARCH__/__MUSA_ARCH__ too.
#ifndef EMU_ARCH
#define EMU_ARCH 800
#endif

#define __global__
#define __device__
#define __host__
#define __shared__ thread_local
#define __constant__
#define __managed__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __grid_constant__
// The GNU attribute rather than alignas: it is also valid in a typedef
// (`typedef __align__(8) float2 Pair;`), as nvcc accepts.
#ifndef __align__
#define __align__(n) __attribute__((aligned(n)))
#endif
#ifndef __builtin_align__
#define __builtin_align__(n) __attribute__((aligned(n)))
#endif
#ifndef __inline__
#define __inline__ inline
#endif

#if defined(__SANITIZE_ADDRESS__)
#define EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMU_ASAN 1
#endif
#endif

// Bytes of stack per emulated GPU thread (a fiber); a guard page sits below each stack. 64 KiB
// holds kernels with a few KiB of local arrays and a printf; AddressSanitizer's redzones need more.
#ifndef EMU_STACK_SIZE
#ifdef EMU_ASAN
#define EMU_STACK_SIZE 262144
#else
#define EMU_STACK_SIZE 65536
#endif
#endif
#define EMU_STACK_SIZE_TEXT EMU_STR_(EMU_STACK_SIZE)

// How the runtime's non-template functions (the thread pool, grids, a block's scheduler, memory)
// are compiled. Header-only (the default, and every sanitizer or race-check build): each is
// `inline` in every translation unit that uses it. With EMU_RUNTIME_LINKED a program sees their
// declarations only and links runtime.cpp, which musify compiles once per flag set
// (musify/emu/build.py) with EMU_RUNTIME_IMPL: g++ then neither instantiates the standard-library
// templates they use (std::thread, std::function, std::map, std::vector) nor generates their
// code again for every program. Templates (launches, the block loop) stay in the headers.
#if defined(EMU_RUNTIME_IMPL)
#define EMU_RT_FN
#define EMU_RT_BODY 1
#elif defined(EMU_RUNTIME_LINKED)
#define EMU_RT_FN
#define EMU_RT_BODY 0
#else
#define EMU_RT_FN inline
#define EMU_RT_BODY 1
#endif
#define EMU_STR_(x) EMU_STR__(x)
#define EMU_STR__(x) #x

namespace emu {

constexpr int kWarpSize = EMU_WARP_SIZE;
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kMaxWarpsPerBlock = kMaxThreadsPerBlock / kWarpSize;

// A set of lanes of one warp (up to 128 lanes): warp operations agree on who takes part.
struct LaneSet {
    std::uint64_t w[2] = {0, 0};
    void set(int lane) { w[lane >> 6] |= std::uint64_t(1) << (lane & 63); }
    bool has(int lane) const { return (w[lane >> 6] >> (lane & 63)) & 1; }
    LaneSet operator&(const LaneSet& o) const { return {{w[0] & o.w[0], w[1] & o.w[1]}}; }
    LaneSet operator|(const LaneSet& o) const { return {{w[0] | o.w[0], w[1] | o.w[1]}}; }
    LaneSet operator~() const { return {{~w[0], ~w[1]}}; }
    bool operator==(const LaneSet& o) const { return w[0] == o.w[0] && w[1] == o.w[1]; }
    bool operator!=(const LaneSet& o) const { return !(*this == o); }
    bool empty() const { return (w[0] | w[1]) == 0; }
    static LaneSet first(int n) {
        LaneSet s;
        for (int i = 0; i < n; ++i) s.set(i);
        return s;
    }
};

// The reading of a 32-bit CUDA lane mask on this warp width (docs/emulator.md): on a 32-lane
// warp bit i is lane i; on a wider warp 0xffffffff means the whole warp (MUSA_FACTS §2: generic
// helpers pass a full 32-bit mask with width = warpSize there), and any other mask names lanes
// 0..31 only.
inline LaneSet lanes_of_mask(unsigned mask) {
    if (kWarpSize > 32 && mask == 0xffffffffu) return LaneSet::first(kWarpSize);
    LaneSet s;
    s.w[0] = mask;
    return s;
}

// The 32-bit mask that names a lane set (inverse of lanes_of_mask, lanes above 31 dropped).
inline unsigned mask_of_lanes(const LaneSet& s) {
    if (kWarpSize > 32 && s == LaneSet::first(kWarpSize)) return 0xffffffffu;
    return static_cast<unsigned>(s.w[0]);
}

}  // namespace emu
