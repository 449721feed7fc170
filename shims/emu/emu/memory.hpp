// Device memory is host memory. Fresh allocations are filled with 0xFF bytes (a NaN in every
// float, -1 in every integer) so that a program reading memory it never wrote gets an answer
// that is visibly wrong rather than a lucky zero. Allocations are tracked so that freeing a
// pointer that was never allocated is an error, as on a GPU.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "config.hpp"
#include "errors.hpp"

#ifdef EMU_ASAN
#include <sanitizer/lsan_interface.h>
#endif

namespace emu {

constexpr unsigned char kPoison = 0xFF;
constexpr size_t kPitchAlignment = 512;
constexpr size_t kTotalMemory = size_t(16) << 30;  // what the emulated device reports

enum class AllocKind { Device, Host, Managed };

struct Allocations {
    std::mutex mutex;
    std::map<const void*, std::pair<size_t, AllocKind>> live;
    size_t in_use = 0;
};

// Which side of a copy a pointer is on, as far as the emulator knows: memory from the device
// allocator is device memory, pinned host memory is host memory, managed memory is both, and
// anything else (the program's own arrays, __device__ variables) is not known either way.
enum class Side { Unknown, Device, Host, Both };

// Allocation and copies, compiled once into the runtime with EMU_RUNTIME_LINKED (config.hpp).
EMU_RT_FN Allocations& allocations();
EMU_RT_FN int allocate(void** ptr, size_t size, AllocKind kind, bool poison = true);
EMU_RT_FN int release(void* ptr, AllocKind kind);
EMU_RT_FN bool find_allocation(const void* p, const void** start, size_t* size, AllocKind* kind);
EMU_RT_FN int malloc_pitch(void** ptr, size_t* pitch, size_t width, size_t height);
EMU_RT_FN Side side_of(const void* p);
EMU_RT_FN bool direction_matches(const void* dst, const void* src, int kind);
EMU_RT_FN int copy(void* dst, const void* src, size_t count, int kind);
EMU_RT_FN int copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height, int kind);
EMU_RT_FN int fill(void* dst, int value, size_t count);
EMU_RT_FN int fill_2d(void* dst, size_t pitch, int value, size_t width, size_t height);
EMU_RT_FN int symbol_copy(void* symbol, size_t symbol_size, void* buffer, size_t count, size_t offset, bool to);

#if EMU_RT_BODY
EMU_RT_FN Allocations& allocations() {
    static Allocations a;
    return a;
}

EMU_RT_FN int allocate(void** ptr, size_t size, AllocKind kind, bool poison) {
    if (!ptr) return result(ErrorInvalidValue);
    *ptr = nullptr;
    if (size == 0) return result(Success);
    Allocations& a = allocations();
    {
        std::lock_guard<std::mutex> lock(a.mutex);
        if (size > kTotalMemory - a.in_use) return result(ErrorMemoryAllocation);
    }
    void* p = std::aligned_alloc(256, (size + 255) / 256 * 256);
    if (!p) return result(ErrorMemoryAllocation);
    if (poison) std::memset(p, kPoison, size);
#ifdef EMU_ASAN
    // The driver frees every allocation when the process ends: one never freed is no leak.
    __lsan_ignore_object(p);
#endif
    std::lock_guard<std::mutex> lock(a.mutex);
    a.live[p] = {size, kind};
    a.in_use += size;
    *ptr = p;
    return result(Success);
}

EMU_RT_FN int release(void* ptr, AllocKind kind) {
    if (!ptr) return result(Success);
    Allocations& a = allocations();
    std::unique_lock<std::mutex> lock(a.mutex);
    auto it = a.live.find(ptr);
    bool host = kind == AllocKind::Host;
    if (it == a.live.end() || (it->second.second == AllocKind::Host) != host)
        return result(host ? ErrorInvalidHostPointer : ErrorInvalidValue);
    a.in_use -= it->second.first;
    a.live.erase(it);
    lock.unlock();
    std::free(ptr);
    return result(Success);
}

// The allocation that contains p, if any: its start, size and kind.
EMU_RT_FN bool find_allocation(const void* p, const void** start, size_t* size, AllocKind* kind) {
    Allocations& a = allocations();
    std::lock_guard<std::mutex> lock(a.mutex);
    auto it = a.live.upper_bound(p);
    if (it == a.live.begin()) return false;
    --it;
    auto base = static_cast<const char*>(it->first);
    if (static_cast<const char*>(p) >= base + it->second.first) return false;
    *start = it->first;
    *size = it->second.first;
    *kind = it->second.second;
    return true;
}

EMU_RT_FN int malloc_pitch(void** ptr, size_t* pitch, size_t width, size_t height) {
    if (!pitch) return result(ErrorInvalidValue);
    *pitch = (width + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
    return allocate(ptr, *pitch * height, AllocKind::Device);
}


EMU_RT_FN Side side_of(const void* p) {
    const void* start;
    size_t size;
    AllocKind kind;
    if (!find_allocation(p, &start, &size, &kind)) return Side::Unknown;
    return kind == AllocKind::Device ? Side::Device : kind == AllocKind::Host ? Side::Host : Side::Both;
}

// kind: 0 host->host, 1 host->device, 2 device->host, 3 device->device, 4 default (by pointer).
// A GPU copies by the kind it is given, so a kind that contradicts the pointers (a swapped
// HostToDevice/DeviceToHost) is undefined behaviour there; here it is an error, reported once per
// call, so a port with swapped directions fails visibly instead of passing by luck.
EMU_RT_FN bool direction_matches(const void* dst, const void* src, int kind) {
    if (kind == 4) return true;
    bool dst_device = kind == 1 || kind == 3, src_device = kind == 2 || kind == 3;
    auto fits = [](Side side, bool device) {
        return side == Side::Unknown || side == Side::Both || (side == Side::Device) == device;
    };
    if (fits(side_of(dst), dst_device) && fits(side_of(src), src_device)) return true;
    static const char* names[] = {"host to host", "host to device", "device to host", "device to device"};
    std::fprintf(stderr, "musify-emu: memory copy marked %s, but %s\n", names[kind],
                 fits(side_of(dst), dst_device) ? (src_device ? "the source is host memory" : "the source is device memory")
                                                : (dst_device ? "the destination is host memory"
                                                              : "the destination is device memory"));
    return false;
}

EMU_RT_FN int copy(void* dst, const void* src, size_t count, int kind) {
    if (kind < 0 || kind > 4) return result(ErrorInvalidMemcpyDirection);
    if (count == 0) return result(Success);
    if (!dst || !src) return result(ErrorInvalidValue);
    if (!direction_matches(dst, src, kind)) return result(ErrorInvalidMemcpyDirection);
    std::memmove(dst, src, count);
    return result(Success);
}

EMU_RT_FN int copy_2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                   int kind) {
    if (kind < 0 || kind > 4) return result(ErrorInvalidMemcpyDirection);
    if (width > dpitch || width > spitch) return result(ErrorInvalidPitchValue);
    if (height && width && (!dst || !src)) return result(ErrorInvalidValue);
    if (height && width && !direction_matches(dst, src, kind)) return result(ErrorInvalidMemcpyDirection);
    for (size_t r = 0; r < height; ++r)
        std::memmove(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch, width);
    return result(Success);
}

EMU_RT_FN int fill(void* dst, int value, size_t count) {
    if (count && !dst) return result(ErrorInvalidValue);
    std::memset(dst, value, count);
    return result(Success);
}

EMU_RT_FN int fill_2d(void* dst, size_t pitch, int value, size_t width, size_t height) {
    if (width > pitch) return result(ErrorInvalidPitchValue);
    for (size_t r = 0; r < height; ++r) std::memset(static_cast<char*>(dst) + r * pitch, value, width);
    return result(Success);
}

// cudaMemcpyToSymbol/FromSymbol: a symbol is the variable itself; offset+count must fit in it.
EMU_RT_FN int symbol_copy(void* symbol, size_t symbol_size, void* buffer, size_t count, size_t offset, bool to) {
    if (offset > symbol_size || count > symbol_size - offset) return result(ErrorInvalidValue);
    char* at = static_cast<char*>(symbol) + offset;
    if (to)
        std::memmove(at, buffer, count);
    else
        std::memmove(buffer, at, count);
    return result(Success);
}
#endif  // EMU_RT_BODY

}  // namespace emu
