// The declarations-only faces of CUDA libraries the emulator does not implement (cuDNN, NCCL,
// cuBLASLt, cuFFT, cuSPARSE, cuSOLVER, NPP, NVRTC, CUPTI) and their MUSA spellings.
//
// shims/emu/libs/{cuda,musa}/ are generated from rules/ by tools/gen_emu_libs.py: every type of
// such a library is `emu::unemulated::Value`, every enumerator a distinct constant, every function
// a variadic function that stops the program naming the call. A program that includes <cudnn.h>
// from a common header but never calls it compiles and runs; one that calls it stops with
// `musify-emu: cudnnCreate (cudnn) is not emulated`, exit status 87. NVTX (profiler annotations,
// which cannot change a result) is the exception: its calls do nothing and return 0.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

namespace emu {
namespace unemulated {

constexpr int kExitUnemulated = 87;

// Stands for every type of an unemulated library: handles, enums, status codes. It converts from
// numbers, enumerators and pointers and to a number, so `cudnnStatus_t s = CUDNN_STATUS_SUCCESS;`,
// `switch (s)`, `s != CUDNN_STATUS_SUCCESS` and `if (handle)` compile.
struct Value {
    long long v = 0;
    constexpr Value() = default;
    template <class T, class = std::enable_if_t<std::is_arithmetic<T>::value || std::is_enum<T>::value>>
    constexpr Value(T x) : v(static_cast<long long>(x)) {}
    template <class T>
    Value(T* p) : v(static_cast<long long>(reinterpret_cast<std::intptr_t>(p))) {}
    constexpr Value(std::nullptr_t) {}
    constexpr operator long long() const { return v; }
    constexpr explicit operator bool() const { return v != 0; }
};

[[noreturn]] inline void fail(const char* name, const char* library) {
    std::fflush(stdout);
    std::fprintf(stderr, "musify-emu: %s (%s) is not emulated: the emulator declares this library so that "
                 "programs including it compile, but cannot run its calls\n", name, library);
    std::fflush(stderr);
    std::_Exit(kExitUnemulated);
}

}  // namespace unemulated
}  // namespace emu

// One function of an unemulated library, or one that does nothing (NVTX).
#define EMU_UNEMULATED(name, library) \
    inline ::emu::unemulated::Value name(...) { ::emu::unemulated::fail(#name, library); }
#define EMU_NO_OP(name) \
    inline ::emu::unemulated::Value name(...) { return {}; }
