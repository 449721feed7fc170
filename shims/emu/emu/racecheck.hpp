// The shared-memory race check (`musify emu-run --racecheck`, built with -DMUSIFY_EMU_RACECHECK=1).
//
// The program is compiled with g++'s ThreadSanitizer instrumentation (-fsanitize=thread) but linked
// without its runtime: every load and store calls __tsan_readN/__tsan_writeN, defined here. Those
// look only at the running block's shared memory (the executable's thread-local block, which holds
// every `__shared__` variable, less the emulator's own thread-locals, and the dynamic shared
// buffer) and keep, per byte, the last write and up to two reads of the current barrier interval.
//
// A race is a read of a byte another thread of the block wrote since the last barrier, or a write
// of a byte another thread read since the last barrier (the emulator runs threads one after the
// other between barriers, so code that relies on lock-step warps reads before its neighbour
// writes). A warp collective that completes counts as a barrier between the lanes of its warp.
// The first race is printed with both source lines and the program exits with status 86.
#pragma once
#include <dlfcn.h>
#include <link.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "launch.hpp"

#define EMU_RC_NOCHECK __attribute__((no_sanitize_thread, noinline))
#define EMU_RC_ENTRY extern "C" __attribute__((weak, used, no_sanitize_thread))

namespace emu {
namespace race {

constexpr int kExitRace = 86;

struct Cell {
    std::uint32_t w_epoch = 0, w_sync = 0;
    std::int32_t w_tid = -1;
    std::uint32_t r_epoch = 0;
    std::int32_t r_tid[2] = {-1, -1};
    std::uint32_t r_sync[2] = {0, 0};
    const void* w_pc = nullptr;
    const void* r_pc[2] = {nullptr, nullptr};
};

struct Range {
    std::uintptr_t lo = 0, size = 0;
    __attribute__((no_sanitize_thread, always_inline)) bool has(std::uintptr_t a) const { return a - lo < size; }
};

struct State {
    bool active = false;
    bool ready = false;
    std::uint32_t epoch = 0;
    Range tls, dyn;
    Range skip[10];  // the emulator's own thread-locals inside the TLS block
    int nskip = 0;
    std::vector<Cell> tls_cells, dyn_cells;
    std::vector<std::uint32_t> warp_sync;  // completed warp collectives, per warp of the block
    // What access() reads, as plain pointers: it may call no instrumented code (such as a
    // vector's members at -O0/-O1), which would call it again.
    Cell* tls_data = nullptr;
    Cell* dyn_data = nullptr;
    std::uint32_t* sync_data = nullptr;
    size_t warps = 0;
};

// A pointer, so that reading it needs no thread-local initialisation (which is instrumented code).
inline thread_local State* tl_state = nullptr;

struct TlsSegment {
    std::uintptr_t memsz = 0, align = 1;
};

EMU_RC_NOCHECK inline int find_tls(dl_phdr_info* info, size_t, void* out) {
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_TLS) {
            auto* seg = static_cast<TlsSegment*>(out);
            seg->memsz = info->dlpi_phdr[i].p_memsz;
            seg->align = info->dlpi_phdr[i].p_align ? info->dlpi_phdr[i].p_align : 1;
        }
    return 1;  // the first object is the executable
}

EMU_RC_NOCHECK inline void add_skip(State& s, const void* p, size_t n) {
    if (s.nskip < 10) s.skip[s.nskip++] = Range{reinterpret_cast<std::uintptr_t>(p), n};
}

// The executable's thread-local block of this OS thread (x86-64 and aarch64 TLS layouts).
EMU_RC_NOCHECK inline void init_thread(State& s) {
    TlsSegment seg;
    dl_iterate_phdr(&find_tls, &seg);
    auto tp = reinterpret_cast<std::uintptr_t>(__builtin_thread_pointer());
    std::uintptr_t size = (seg.memsz + seg.align - 1) / seg.align * seg.align;
#if defined(__x86_64__)
    s.tls = Range{tp - size, size};
#elif defined(__aarch64__)
    std::uintptr_t start = (16 + seg.align - 1) / seg.align * seg.align;
    s.tls = Range{tp + start, size};
#else
    s.tls = Range{0, 0};
#endif
    s.tls_cells.assign(s.tls.size, Cell{});
    add_skip(s, &::threadIdx, sizeof(::threadIdx));
    add_skip(s, &::blockIdx, sizeof(::blockIdx));
    add_skip(s, &::blockDim, sizeof(::blockDim));
    add_skip(s, &::gridDim, sizeof(::gridDim));
    add_skip(s, &tl_block, sizeof(tl_block));
    add_skip(s, &worker_block(), sizeof(BlockCtx));
    add_skip(s, &tl_last_error, sizeof(tl_last_error));
    add_skip(s, &tl_arena, sizeof(tl_arena));
    add_skip(s, &tl_state, sizeof(tl_state));
    add_skip(s, &s, sizeof(State));
    s.ready = true;
}

EMU_RC_NOCHECK inline void block_begin(BlockCtx& b) {
    if (!tl_state) tl_state = new State();  // one per OS thread, kept to the end of the program
    State& s = *tl_state;
    if (!s.ready) init_thread(s);
    ++s.epoch;
    s.dyn = Range{reinterpret_cast<std::uintptr_t>(b.dyn_smem), b.dyn_smem ? b.dyn_smem_size : 0};
    if (s.dyn_cells.size() < s.dyn.size) s.dyn_cells.resize(s.dyn.size);
    s.warp_sync.assign(static_cast<size_t>((b.n + kWarpSize - 1) / kWarpSize), 0);
    s.tls_data = s.tls_cells.data();
    s.dyn_data = s.dyn_cells.data();
    s.sync_data = s.warp_sync.data();
    s.warps = s.warp_sync.size();
    s.active = true;
}

EMU_RC_NOCHECK inline void block_end() { tl_state->active = false; }

EMU_RC_NOCHECK inline void barrier_released() { ++tl_state->epoch; }

EMU_RC_NOCHECK inline void warp_synced(int warp) {
    State& s = *tl_state;
    if (static_cast<size_t>(warp) < s.warps) ++s.sync_data[warp];
}

// "file:line" of a code address, from the executable's line table (addr2line); the address if
// that is not possible.
EMU_RC_NOCHECK inline void describe(const void* pc, char* out, size_t size) {
    std::snprintf(out, size, "%p", pc);
    Dl_info info;
    if (!pc || !dladdr(pc, &info) || !info.dli_fname) return;
    auto offset = reinterpret_cast<std::uintptr_t>(pc) - reinterpret_cast<std::uintptr_t>(info.dli_fbase) - 1;
    char cmd[4200];
    std::snprintf(cmd, sizeof cmd, "addr2line -e '%s' 0x%lx 2>/dev/null", info.dli_fname,
                  static_cast<unsigned long>(offset));
    if (FILE* p = popen(cmd, "r")) {
        char line[4096];
        if (std::fgets(line, sizeof line, p) && line[0] != '?') {
            line[std::strcspn(line, " \n")] = 0;
            std::snprintf(out, size, "%s", line);
        }
        pclose(p);
    }
}

[[noreturn]] EMU_RC_NOCHECK inline void report(const BlockCtx& b, int writer, const void* wpc, int reader,
                                               const void* rpc, bool read_first) {
    tl_state->active = false;  // what follows is instrumented code
    char wsite[4096], rsite[4096];
    describe(wpc, wsite, sizeof wsite);
    describe(rpc, rsite, sizeof rsite);
    uint3 w = b.thread_index(writer), r = b.thread_index(reader);
    std::fflush(stdout);
    std::fprintf(stderr,
                 "musify-emu: shared-memory race: write at %s by thread (%u,%u,%u), read at %s by thread "
                 "(%u,%u,%u), block (%u,%u,%u), no barrier between\n",
                 wsite, w.x, w.y, w.z, rsite, r.x, r.y, r.z, b.idx.x, b.idx.y, b.idx.z);
    std::fprintf(stderr,
                 "musify-emu: the %s came first here; threads of a block are not ordered without "
                 "__syncthreads() (or __syncwarp() within a warp), so the result depends on the schedule\n",
                 read_first ? "read" : "write");
    std::fflush(stderr);
    std::_Exit(kExitRace);
}

EMU_RC_NOCHECK inline bool synced(const State& s, int a, int b, std::uint32_t then) {
    int wa = a / kWarpSize;
    return wa == b / kWarpSize && static_cast<size_t>(wa) < s.warps && s.sync_data[wa] != then;
}

EMU_RC_NOCHECK inline std::uint32_t sync_of(const State& s, int t) {
    size_t w = static_cast<size_t>(t / kWarpSize);
    return w < s.warps ? s.sync_data[w] : 0;
}

EMU_RC_NOCHECK inline void access(const void* addr, size_t n, bool write, const void* pc) {
    State* state = tl_state;
    if (!state || !state->active) return;
    State& s = *state;
    auto a = reinterpret_cast<std::uintptr_t>(addr);
    Cell* cells;
    if (s.tls.has(a)) {
        for (int i = 0; i < s.nskip; ++i)
            if (s.skip[i].has(a)) return;
        cells = s.tls_data + (a - s.tls.lo);
        if (n > s.tls.lo + s.tls.size - a) n = s.tls.lo + s.tls.size - a;
    } else if (s.dyn.has(a)) {
        cells = s.dyn_data + (a - s.dyn.lo);
        if (n > s.dyn.lo + s.dyn.size - a) n = s.dyn.lo + s.dyn.size - a;
    } else {
        return;
    }
    const BlockCtx& b = *tl_block;
    int t = b.cur;
    std::uint32_t now = sync_of(s, t);
    for (size_t i = 0; i < n; ++i) {
        Cell& c = cells[i];
        if (write) {
            if (c.r_epoch == s.epoch)
                for (int k = 0; k < 2; ++k)
                    if (c.r_tid[k] >= 0 && c.r_tid[k] != t && !synced(s, c.r_tid[k], t, c.r_sync[k]))
                        report(b, t, pc, c.r_tid[k], c.r_pc[k], true);
            c.w_epoch = s.epoch;
            c.w_tid = t;
            c.w_pc = pc;
            c.w_sync = now;
        } else {
            if (c.w_epoch == s.epoch && c.w_tid != t && !synced(s, c.w_tid, t, c.w_sync))
                report(b, c.w_tid, c.w_pc, t, pc, false);
            if (c.r_epoch != s.epoch) {
                c.r_epoch = s.epoch;
                c.r_tid[0] = t;
                c.r_tid[1] = -1;
                c.r_pc[0] = pc;
                c.r_sync[0] = now;
            } else if (c.r_tid[0] != t && c.r_tid[1] < 0) {
                c.r_tid[1] = t;
                c.r_pc[1] = pc;
                c.r_sync[1] = now;
            }
        }
    }
}

}  // namespace race
}  // namespace emu

// What the instrumentation calls (the names and signatures of ThreadSanitizer's interface).
#define EMU_RC_ACCESS(n)                                                                         \
    EMU_RC_ENTRY void __tsan_read##n(void* p) {                                                  \
        emu::race::access(p, n, false, __builtin_return_address(0));                             \
    }                                                                                            \
    EMU_RC_ENTRY void __tsan_write##n(void* p) { emu::race::access(p, n, true, __builtin_return_address(0)); } \
    EMU_RC_ENTRY void __tsan_unaligned_read##n(void* p) {                                        \
        emu::race::access(p, n, false, __builtin_return_address(0));                             \
    }                                                                                            \
    EMU_RC_ENTRY void __tsan_unaligned_write##n(void* p) {                                       \
        emu::race::access(p, n, true, __builtin_return_address(0));                              \
    }
EMU_RC_ACCESS(1)
EMU_RC_ACCESS(2)
EMU_RC_ACCESS(4)
EMU_RC_ACCESS(8)
EMU_RC_ACCESS(16)
#undef EMU_RC_ACCESS

EMU_RC_ENTRY void __tsan_read_range(void* p, unsigned long n) {
    emu::race::access(p, n, false, __builtin_return_address(0));
}
EMU_RC_ENTRY void __tsan_write_range(void* p, unsigned long n) {
    emu::race::access(p, n, true, __builtin_return_address(0));
}
EMU_RC_ENTRY void __tsan_init() {}
EMU_RC_ENTRY void __tsan_func_entry(void*) {}
EMU_RC_ENTRY void __tsan_func_exit() {}
EMU_RC_ENTRY void __tsan_vptr_update(void**, void*) {}
EMU_RC_ENTRY void __tsan_vptr_read(void**) {}
EMU_RC_ENTRY void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
EMU_RC_ENTRY void __tsan_atomic_signal_fence(int) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }

// Atomics are performed (sequentially consistent, whatever order was asked) and are not races.
#define EMU_RC_ATOMIC_OP(bits, T, op)                                                   \
    EMU_RC_ENTRY T __tsan_atomic##bits##_##op(volatile T* a, T v, int) {              \
        return __atomic_##op(a, v, __ATOMIC_SEQ_CST);                                 \
    }
#define EMU_RC_ATOMIC(bits, T)                                                                    \
    EMU_RC_ENTRY T __tsan_atomic##bits##_load(const volatile T* a, int) {                        \
        return __atomic_load_n(a, __ATOMIC_SEQ_CST);                                              \
    }                                                                                             \
    EMU_RC_ENTRY void __tsan_atomic##bits##_store(volatile T* a, T v, int) {                     \
        __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                                 \
    }                                                                                             \
    EMU_RC_ENTRY T __tsan_atomic##bits##_exchange(volatile T* a, T v, int) {                     \
        return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                                       \
    }                                                                                             \
    EMU_RC_ATOMIC_OP(bits, T, fetch_add)                                                          \
    EMU_RC_ATOMIC_OP(bits, T, fetch_sub)                                                          \
    EMU_RC_ATOMIC_OP(bits, T, fetch_and)                                                          \
    EMU_RC_ATOMIC_OP(bits, T, fetch_or)                                                           \
    EMU_RC_ATOMIC_OP(bits, T, fetch_xor)                                                          \
    EMU_RC_ATOMIC_OP(bits, T, fetch_nand)                                                         \
    EMU_RC_ENTRY int __tsan_atomic##bits##_compare_exchange_strong(volatile T* a, T* c, T v, int, int) { \
        return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);   \
    }                                                                                             \
    EMU_RC_ENTRY int __tsan_atomic##bits##_compare_exchange_weak(volatile T* a, T* c, T v, int, int) { \
        return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);   \
    }                                                                                             \
    EMU_RC_ENTRY T __tsan_atomic##bits##_compare_exchange_val(volatile T* a, T c, T v, int, int) { \
        __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);         \
        return c;                                                                                 \
    }
EMU_RC_ATOMIC(8, unsigned char)
EMU_RC_ATOMIC(16, unsigned short)
EMU_RC_ATOMIC(32, unsigned int)
EMU_RC_ATOMIC(64, unsigned long long)
#undef EMU_RC_ATOMIC
#undef EMU_RC_ATOMIC_OP
