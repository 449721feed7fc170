// Runtime errors: one list of codes (with CUDA's numbers) that both faces turn into their enum,
// and CUDA's two kinds of error. A non-sticky error (a bad argument, a bad launch
// configuration) is returned and remembered as the "last error" of the calling host thread
// until cudaGetLastError reads it. A sticky error (a kernel that trapped) corrupts the context:
// every later call returns it until the device is reset.
#pragma once
#include <atomic>

// X(suffix, value, description): the face prepends cuda/musa to the suffix.
#define EMU_ERROR_LIST(X)                                                            \
    X(Success, 0, "no error")                                                        \
    X(ErrorInvalidValue, 1, "invalid argument")                                      \
    X(ErrorMemoryAllocation, 2, "out of memory")                                     \
    X(ErrorInitializationError, 3, "initialization error")                           \
    X(ErrorCudartUnloading, 4, "driver shutting down")                               \
    X(ErrorInvalidConfiguration, 9, "invalid configuration argument")                \
    X(ErrorInvalidPitchValue, 12, "invalid pitch argument")                          \
    X(ErrorInvalidSymbol, 13, "invalid device symbol")                               \
    X(ErrorInvalidHostPointer, 16, "invalid host pointer")                           \
    X(ErrorInvalidDevicePointer, 17, "invalid device pointer")                       \
    X(ErrorInvalidMemcpyDirection, 21, "invalid copy direction for memcpy")          \
    X(ErrorMissingConfiguration, 52, "__global__ function call is not configured")   \
    X(ErrorInvalidDeviceFunction, 98, "invalid device function")                     \
    X(ErrorNoDevice, 100, "no CUDA-capable device is detected")                      \
    X(ErrorInvalidDevice, 101, "invalid device ordinal")                             \
    X(ErrorInvalidResourceHandle, 400, "invalid resource handle")                    \
    X(ErrorIllegalState, 401, "the operation cannot be performed in the present state") \
    X(ErrorSymbolNotFound, 500, "named symbol not found")                            \
    X(ErrorNotReady, 600, "device not ready")                                        \
    X(ErrorIllegalAddress, 700, "an illegal memory access was encountered")          \
    X(ErrorLaunchOutOfResources, 701, "too many resources requested for launch")     \
    X(ErrorAssert, 710, "device-side assert triggered")                              \
    X(ErrorLaunchFailure, 719, "unspecified launch failure")                         \
    X(ErrorCooperativeLaunchTooLarge, 720, "too many blocks in cooperative launch")   \
    X(ErrorNotPermitted, 800, "operation not permitted")                             \
    X(ErrorNotSupported, 801, "operation not supported")                             \
    X(ErrorUnknown, 999, "unknown error")

namespace emu {

enum Error : int {
#define EMU_ERROR_ENUM(name, value, text) name = value,
    EMU_ERROR_LIST(EMU_ERROR_ENUM)
#undef EMU_ERROR_ENUM
};

inline const char* error_string(int e) {
    switch (e) {
#define EMU_ERROR_CASE(name, value, text) \
    case value:                           \
        return text;
        EMU_ERROR_LIST(EMU_ERROR_CASE)
#undef EMU_ERROR_CASE
    }
    return "unrecognized error code";
}

// The enumerator name without the face prefix ("ErrorInvalidValue"); the face adds it.
inline const char* error_suffix(int e) {
    switch (e) {
#define EMU_ERROR_CASE(name, value, text) \
    case value:                           \
        return #name;
        EMU_ERROR_LIST(EMU_ERROR_CASE)
#undef EMU_ERROR_CASE
    }
    return "ErrorUnknown";
}

inline bool is_sticky(int e) { return e == ErrorIllegalAddress || e == ErrorAssert || e == ErrorLaunchFailure; }

inline std::atomic<int>& sticky_error() {
    static std::atomic<int> e{Success};
    return e;
}
inline thread_local int tl_last_error = Success;

// Every runtime call returns through here: remember a failure, and let a sticky error win.
inline int result(int e) {
    int sticky = sticky_error().load();
    if (sticky != Success) e = sticky;
    if (e != Success) {
        if (is_sticky(e)) sticky_error().store(e);
        tl_last_error = e;
    }
    return e;
}

inline int get_last_error() {
    int sticky = sticky_error().load();
    if (sticky != Success) return sticky;
    int e = tl_last_error;
    tl_last_error = Success;
    return e;
}

inline int peek_last_error() {
    int sticky = sticky_error().load();
    return sticky != Success ? sticky : tl_last_error;
}

}  // namespace emu
