// The runtime behind both faces: device properties, streams, events and occupancy. Streams
// are synchronous (every operation has finished when its call returns), so a stream only has
// to exist; events take the time at which they are recorded, which then is real elapsed time.
#pragma once
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>

#include "atomics.hpp"
#include "launch.hpp"
#include "memory.hpp"
#include "warp.hpp"

namespace emu {

struct Stream {
    unsigned flags = 0;
    int priority = 0;
};

struct Event {
    unsigned flags = 0;
    bool recorded = false;
    std::chrono::steady_clock::time_point when{};
};

// Handles the runtime gave out and that were not destroyed yet.
template <class T>
struct Handles {
    std::mutex mutex;
    std::set<T*> live;
    T* create() {
        T* h = new T();
        std::lock_guard<std::mutex> lock(mutex);
        live.insert(h);
        return h;
    }
    bool valid(T* h) {
        std::lock_guard<std::mutex> lock(mutex);
        return live.count(h) != 0;
    }
    bool destroy(T* h) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!live.erase(h)) return false;
        delete h;
        return true;
    }
};

inline Handles<Stream>& streams() {
    static Handles<Stream> h;
    return h;
}
inline Handles<Event>& events() {
    static Handles<Event> h;
    return h;
}

// A null stream (the legacy default stream) and the two special handles are always valid.
inline bool stream_ok(Stream* s) {
    auto v = reinterpret_cast<std::uintptr_t>(s);
    return v <= 2 || streams().valid(s);
}

constexpr unsigned kEventDisableTiming = 2;

inline int event_record(Event* e) {
    if (!events().valid(e)) return result(ErrorInvalidResourceHandle);
    e->recorded = true;
    e->when = std::chrono::steady_clock::now();
    return result(Success);
}

inline int event_elapsed(float* ms, Event* start, Event* stop) {
    if (!ms) return result(ErrorInvalidValue);
    if (!events().valid(start) || !events().valid(stop)) return result(ErrorInvalidResourceHandle);
    if ((start->flags | stop->flags) & kEventDisableTiming) return result(ErrorInvalidResourceHandle);
    if (!start->recorded || !stop->recorded) return result(ErrorInvalidResourceHandle);
    *ms = std::chrono::duration<float, std::milli>(stop->when - start->when).count();
    return result(Success);
}

// The device the emulator pretends to be (the fields every face's property struct shares).
struct DeviceProp {
    char name[256];
    char uuid[16];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    size_t texturePitchAlignment;
    int deviceOverlap;
    int multiProcessorCount;
    int kernelExecTimeoutEnabled;
    int integrated;
    int canMapHostMemory;
    int computeMode;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int pciDomainID;
    int tccDriver;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryClockRate;
    int memoryBusWidth;
    int l2CacheSize;
    int persistingL2CacheMaxSize;
    int maxThreadsPerMultiProcessor;
    int streamPrioritiesSupported;
    int globalL1CacheSupported;
    int localL1CacheSupported;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int isMultiGpuBoard;
    int multiGpuBoardGroupID;
    int pageableMemoryAccess;
    int concurrentManagedAccess;
    int computePreemptionSupported;
    int cooperativeLaunch;
    int cooperativeMultiDeviceLaunch;
    size_t sharedMemPerBlockOptin;
    int maxBlocksPerMultiProcessor;
    size_t reservedSharedMemPerBlock;
};

inline void fill_properties(DeviceProp& p, const char* name) {
    std::memset(&p, 0, sizeof p);
    std::snprintf(p.name, sizeof p.name, "%s", name);
    p.totalGlobalMem = kTotalMemory;
    p.sharedMemPerBlock = kSharedPerBlock;
    p.regsPerBlock = 65536;
    p.warpSize = kWarpSize;
    p.memPitch = 0x7fffffff;
    p.maxThreadsPerBlock = kMaxThreadsPerBlock;
    p.maxThreadsDim[0] = 1024;
    p.maxThreadsDim[1] = 1024;
    p.maxThreadsDim[2] = 64;
    p.maxGridSize[0] = 0x7fffffff;
    p.maxGridSize[1] = 65535;
    p.maxGridSize[2] = 65535;
    p.clockRate = 1500000;
    p.totalConstMem = 65536;
    p.major = EMU_ARCH / 100;
    p.minor = EMU_ARCH / 10 % 10;
    p.textureAlignment = 512;
    p.texturePitchAlignment = 32;
    p.deviceOverlap = 1;
    p.multiProcessorCount = kMultiProcessors;
    p.canMapHostMemory = 1;
    p.concurrentKernels = 1;
    p.asyncEngineCount = 1;
    p.unifiedAddressing = 1;
    p.memoryClockRate = 1500000;
    p.memoryBusWidth = 256;
    p.l2CacheSize = 4 << 20;
    p.maxThreadsPerMultiProcessor = kMaxThreadsPerMultiProcessor;
    p.streamPrioritiesSupported = 1;
    p.globalL1CacheSupported = 1;
    p.localL1CacheSupported = 1;
    p.sharedMemPerMultiprocessor = kSharedPerMultiProcessor;
    p.regsPerMultiprocessor = 65536;
    p.managedMemory = 1;
    p.pageableMemoryAccess = 1;
    p.concurrentManagedAccess = 1;
    p.computePreemptionSupported = 1;
    p.cooperativeLaunch = 1;
    p.sharedMemPerBlockOptin = kSharedPerBlockOptin;
    p.maxBlocksPerMultiProcessor = kMaxBlocksPerMultiProcessor;
    p.reservedSharedMemPerBlock = 1024;
}

// cudaOccupancyMaxPotentialBlockSize: the largest block size (a multiple of the warp size, at
// most `limit`) that reaches the best occupancy, as the CUDA helper picks it.
inline void max_potential_block_size(int* min_grid, int* block, size_t smem, int limit) {
    int best = 0, best_size = kWarpSize;
    int top = limit > 0 ? std::min(limit, kMaxThreadsPerBlock) : kMaxThreadsPerBlock;
    for (int size = top / kWarpSize * kWarpSize; size >= kWarpSize; size -= kWarpSize) {
        int active = blocks_per_multiprocessor(size, smem) * size;
        if (active > best) {
            best = active;
            best_size = size;
        }
    }
    if (block) *block = best_size;
    if (min_grid) *min_grid = blocks_per_multiprocessor(best_size, smem) * kMultiProcessors;
}

// Device attributes by number (the runtime's cudaDevAttr* and the driver's CU_DEVICE_ATTRIBUTE_*
// share their numbers); false for an attribute the emulator does not know.
inline bool device_attribute(int attr, int* v) {
    DeviceProp p;
    fill_properties(p, "");
    switch (attr) {
        case 1: *v = p.maxThreadsPerBlock; return true;
        case 2: *v = p.maxThreadsDim[0]; return true;
        case 3: *v = p.maxThreadsDim[1]; return true;
        case 4: *v = p.maxThreadsDim[2]; return true;
        case 5: *v = p.maxGridSize[0]; return true;
        case 6: *v = p.maxGridSize[1]; return true;
        case 7: *v = p.maxGridSize[2]; return true;
        case 8: *v = static_cast<int>(p.sharedMemPerBlock); return true;
        case 9: *v = static_cast<int>(p.totalConstMem); return true;
        case 10: *v = p.warpSize; return true;
        case 12: *v = p.regsPerBlock; return true;
        case 13: *v = p.clockRate; return true;
        case 16: *v = p.multiProcessorCount; return true;
        case 37: *v = p.memoryBusWidth; return true;
        case 38: *v = p.l2CacheSize; return true;
        case 39: *v = p.maxThreadsPerMultiProcessor; return true;
        case 41: *v = p.unifiedAddressing; return true;
        case 75: *v = p.major; return true;
        case 76: *v = p.minor; return true;
        case 81: *v = static_cast<int>(p.sharedMemPerMultiprocessor); return true;
        case 82: *v = p.regsPerMultiprocessor; return true;
        case 83: *v = p.managedMemory; return true;
        case 89: *v = p.concurrentManagedAccess; return true;
        case 95: *v = p.cooperativeLaunch; return true;
        case 97: *v = static_cast<int>(p.sharedMemPerBlockOptin); return true;
        case 106: *v = p.maxBlocksPerMultiProcessor; return true;
    }
    return false;
}

inline int device_sync() { return result(Success); }

// Forget every sticky error and allocation, as cudaDeviceReset does.
inline int device_reset() {
    sticky_error().store(Success);
    tl_last_error = Success;
    return Success;
}

}  // namespace emu

#ifdef MUSIFY_EMU_RACECHECK
#include "racecheck.hpp"
#endif
