// One thread block on one OS thread: the plain loop, the switch to fibers, barriers, warp
// collectives and the report of a barrier that can never complete.
//
// A block starts as a loop that runs thread after thread to completion on the OS thread's own
// stack: kernels without barriers pay one indirect call per thread. The first barrier or warp
// operation switches the block to fibers: the thread that hit it keeps the OS thread's stack,
// every thread that has not started yet gets a fiber of its own, and threads that already
// returned count as arrived. Fibers are scheduled cooperatively in a fixed order, so a block
// always runs the same way.
#pragma once
#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "fiber.hpp"
#include "vector.hpp"

// The built-in variables. One OS thread runs one CUDA thread at a time, so thread_local
// variables updated at every switch are exact (and as cheap as a global to read).
inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local uint3 blockDim;
inline thread_local uint3 gridDim;
constexpr int warpSize = EMU_WARP_SIZE;

namespace emu {

// Exit status of a program stopped by the emulator (divergent barrier, bad warp collective).
constexpr int kExitDivergence = 3;

struct Site {
    const char* file;
    int line;
};

inline bool same_site(const Site& a, const Site& b) {
    return a.line == b.line && (a.file == b.file || std::strcmp(a.file, b.file) == 0);
}

// Thrown by __trap() and caught where the thread started: the thread ends, the launch fails.
struct Trap {};

enum class ThreadState : std::uint8_t { NotStarted, Ready, Running, AtBarrier, AtWarpOp, Done };

struct BlockCtx;
struct ThreadCtx;
using WarpCombine = void (*)(BlockCtx& block, ThreadCtx* const* lanes, int count);

// What the scheduler touches at every switch, kept apart from ThreadCtx in a dense array (40
// bytes a thread) so that a barrier over a whole block stays within a few cache lines per warp.
struct FiberSlot {
    Context ctx;
    Site site{"", 0};  // where the thread waits (barrier or warp operation), for reports
    uint3 idx{};
    ThreadState state = ThreadState::NotStarted;
};

struct ThreadCtx {
    int lane = 0;
    int warp = 0;
    // Warp collective: who takes part, how to combine, what this lane brings and gets.
    LaneSet group;
    WarpCombine combine = nullptr;
    std::uint64_t payload[2] = {0, 0};
    int arg = 0;
    int width = 0;
    bool coalesce = false;  // coalesced_threads(): completes with the lanes that reach it together
    std::uint64_t result[2] = {0, 0};
    unsigned long long grid_syncs = 0;  // grid barriers this thread has entered
};

struct WarpCtx {
    LaneSet exists;   // lanes that are threads of the block
    LaneSet done;     // lanes that returned (they count as arrived)
    LaneSet waiting;  // lanes waiting in a warp collective
};

// What a launch shares between its blocks.
struct GridShared {
    bool cooperative = false;
    volatile bool trapped = false;
    void (*grid_barrier)(GridShared&) = nullptr;
    void* grid_barrier_state = nullptr;
};

void fiber_main(void* arg);

// Hooks of the shared-memory race check (racecheck.hpp); nothing without MUSIFY_EMU_RACECHECK.
#ifdef MUSIFY_EMU_RACECHECK
namespace race {
inline void barrier_released();
inline void warp_synced(int warp);
}  // namespace race
#define EMU_RC_HOOK(call) ::emu::race::call
#else
#define EMU_RC_HOOK(call) ((void)0)
#endif

struct BlockCtx {
    int n = 0;
    uint3 dim{}, grid{}, idx{};
    void (*invoke)(void*) = nullptr;      // runs one thread's body (fibers start with it)
    void (*run_loop)(BlockCtx&) = nullptr;  // run(), with the body inlined into the loop
    void* closure = nullptr;
    GridShared* shared = nullptr;
    char* dyn_smem = nullptr;
    size_t dyn_smem_size = 0;
    std::vector<char> dyn_buffer;

    bool fiber_mode = false;
    int cur = 0;
    int native_tid = 0;
    int live = 0;
    std::vector<ThreadCtx> th;
    std::vector<FiberSlot> slots;
    StackArena stacks;
    std::vector<int> runq;
    size_t rq_head = 0;
    std::vector<WarpCtx> warps;
    std::vector<int> bar_waiters;
    Site bar_site{"", 0};
    bool bar_mixed = false;
    int bar_count = 0;
    int bar_released = 0;  // the count of the barrier last released (what its waiters return)
    unsigned long long grid_syncs_done = 0;  // grid barriers this block has passed

    uint3 thread_index(int t) const {
        unsigned x = static_cast<unsigned>(t) % dim.x;
        unsigned rest = static_cast<unsigned>(t) / dim.x;
        return uint3{x, rest % dim.y, rest / dim.y};
    }

    // Run every thread of the block; returns when all have returned. `body` runs the current
    // thread; launches pass one the compiler can inline (run_loop), so a kernel without barriers
    // costs what a loop over its body costs.
    template <class Body>
    void run_threads(Body body) {
        fiber_mode = false;
        grid_syncs_done = 0;
        int t = 0;
        for (unsigned z = 0; z < dim.z; ++z)
            for (unsigned y = 0; y < dim.y; ++y)
                for (unsigned x = 0; x < dim.x; ++x, ++t) {
                    cur = t;
                    threadIdx = uint3{x, y, z};
                    try {
                        body();
                    } catch (const Trap&) {
                        shared->trapped = true;
                    }
                    if (__builtin_expect(fiber_mode, 0)) {  // this thread, on the native stack, ended in fiber mode
                        thread_exit();
                        fiber_mode = false;
                        return;
                    }
                }
    }

    // Cold parts of the scheduler are defined below the class (see the note there); the
    // barrier's path (barrier, schedule, switch_to) stays here, inlined into every kernel.
    void run();
    void run_body();
    void enter_fiber_mode();

    void switch_to(int t) {
        int from = cur;
        FiberSlot& next = slots[t];
        if (next.state == ThreadState::NotStarted)
            make_context(next.ctx, stacks.base(t), stacks.size(t), &fiber_main, this);
        if (next.state != ThreadState::Done) next.state = ThreadState::Running;
        if (t == from) return;
        cur = t;
        threadIdx = next.idx;
        switch_context(slots[from].ctx, next.ctx);
    }

    // The current thread waits (or ended): run the next runnable thread, release a barrier
    // when every live thread waits at it, or report a block that can never go on. Releasing a
    // barrier is O(1): its waiters, in arrival order, become the run queue (a thread's state
    // says AtBarrier until it runs again, which only a stall report could see, and a stall
    // happens only with an empty run queue).
    void schedule() {
        for (;;) {
            if (rq_head < runq.size()) {
                int t = runq[rq_head++];
                if (rq_head == runq.size()) {
                    runq.clear();
                    rq_head = 0;
                } else {
                    __builtin_prefetch(slots[runq[rq_head]].ctx.sp_hint());
                }
                switch_to(t);
                return;
            }
            if (live == 0) {
                switch_to(native_tid);
                return;
            }
            if (!bar_mixed && bar_waiters.size() == static_cast<size_t>(live)) {
                bar_released = bar_count;
                EMU_RC_HOOK(barrier_released());
                runq.swap(bar_waiters);  // runq is empty here
                bar_waiters.clear();
                continue;
            }
            if (complete_coalesced()) continue;
            report_stall();
        }
    }

    // The current thread's body returned while the block is in fiber mode.
    void thread_exit();

    int barrier(Site site, int pred) {
        if (n == 1) return pred != 0;
        if (!fiber_mode) enter_fiber_mode();
        FiberSlot& me = slots[cur];
        me.state = ThreadState::AtBarrier;
        me.site = site;
        if (bar_waiters.empty()) {
            bar_site = site;
            bar_mixed = false;
            bar_count = 0;
        } else if (!same_site(site, bar_site)) {
            bar_mixed = true;
        }
        bar_waiters.push_back(cur);
        bar_count += pred != 0;
        schedule();
        return bar_released;
    }

    // Lanes of `group` that must arrive before a collective over it completes.
    LaneSet needed(int warp, const LaneSet& group) const {
        return group & warps[warp].exists & ~warps[warp].done;
    }

    bool try_complete(int warp, LaneSet group);

    // The current thread takes part in a warp collective; its ThreadCtx holds its input
    // (group, combine, payload, arg, width) and receives its result.
    void warp_collective(Site site);

    // Nothing can run: lanes waiting in coalesced_threads() at one call site form their group now
    // (every other lane of their warp has returned or waits elsewhere, so none can join them).
    bool complete_coalesced();

    // The current thread's record, valid in loop mode too (where only the running thread has one).
    ThreadCtx& current_ctx();

    [[noreturn]] void report_mismatch(int warp, const LaneSet& lanes);

    // Every live thread waits and none can go on: a divergent barrier or collective.
    [[noreturn]] void report_stall();
};

inline thread_local BlockCtx* tl_block = nullptr;

// BlockCtx's scheduler, out of the class: compiled once into the runtime with EMU_RUNTIME_LINKED
// (config.hpp), inline in every translation unit otherwise.
#if EMU_RT_BODY
EMU_RT_FN void fiber_main(void* arg) {
    auto* b = static_cast<BlockCtx*>(arg);
#ifdef EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
    b->run_body();
    b->thread_exit();
    std::fprintf(stderr, "emu: internal error: a finished fiber was resumed\n");
    std::abort();
}

EMU_RT_FN void BlockCtx::run() {
    if (run_loop)
        run_loop(*this);
    else
        run_threads([this] { invoke(closure); });
}

EMU_RT_FN void BlockCtx::run_body() {
    try {
        invoke(closure);
    } catch (const Trap&) {
        shared->trapped = true;
    }
}

EMU_RT_FN void BlockCtx::enter_fiber_mode() {
    fiber_mode = true;
    native_tid = cur;
    if (th.size() < static_cast<size_t>(n)) th.resize(n);
    if (slots.size() < static_cast<size_t>(n)) slots.resize(n);
    stacks.reserve(n);
    int nwarps = (n + kWarpSize - 1) / kWarpSize;
    warps.assign(nwarps, WarpCtx{});
    for (int t = 0; t < n; ++t) {
        ThreadCtx& c = th[t];
        FiberSlot& f = slots[t];
        f.idx = thread_index(t);
        c.lane = t % kWarpSize;
        c.warp = t / kWarpSize;
        c.grid_syncs = 0;
        f.state = t < cur ? ThreadState::Done : t == cur ? ThreadState::Running : ThreadState::NotStarted;
        warps[c.warp].exists.set(c.lane);
        if (t < cur) warps[c.warp].done.set(c.lane);
    }
    live = n - cur;
    runq.clear();
    rq_head = 0;
    for (int t = cur + 1; t < n; ++t) runq.push_back(t);
    bar_waiters.clear();
#ifdef EMU_ASAN
    pthread_attr_t attr;
    pthread_getattr_np(pthread_self(), &attr);
    void* addr = nullptr;
    size_t size = 0;
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    slots[cur].ctx.stack_bottom = addr;
    slots[cur].ctx.stack_size = size;
#endif
}

EMU_RT_FN void BlockCtx::thread_exit() {
    ThreadCtx& me = th[cur];
    slots[cur].state = ThreadState::Done;
    --live;
    WarpCtx& w = warps[me.warp];
    w.done.set(me.lane);
    // Lanes waiting for this one in a collective may now be complete.
    for (int l = 0; l < kWarpSize; ++l)
        if (w.waiting.has(l) && !th[me.warp * kWarpSize + l].coalesce)
            try_complete(me.warp, th[me.warp * kWarpSize + l].group);
    schedule();
}

EMU_RT_FN bool BlockCtx::try_complete(int warp, LaneSet group) {
    WarpCtx& w = warps[warp];
    LaneSet need = needed(warp, group);
    if (!(need & ~w.waiting).empty()) return false;
    ThreadCtx* lanes[kWarpSize];
    int count = 0;
    WarpCombine combine = nullptr;
    for (int l = 0; l < kWarpSize; ++l) {
        if (!need.has(l)) continue;
        ThreadCtx* c = &th[warp * kWarpSize + l];
        if (combine && c->combine != combine) report_mismatch(warp, need);
        combine = c->combine;
        lanes[count++] = c;
    }
    if (count == 0) return false;
    combine(*this, lanes, count);
    EMU_RC_HOOK(warp_synced(warp));
    for (int i = 0; i < count; ++i) {
        ThreadCtx* c = lanes[i];
        w.waiting.w[c->lane >> 6] &= ~(std::uint64_t(1) << (c->lane & 63));
        int t = static_cast<int>(c - th.data());
        if (t == cur) {
            slots[t].state = ThreadState::Running;
        } else {
            slots[t].state = ThreadState::Ready;
            runq.push_back(t);
        }
    }
    return true;
}

EMU_RT_FN void BlockCtx::warp_collective(Site site) {
    ThreadCtx& me = th[cur];
    if (!fiber_mode) {
        // Alone in the collective (its partners returned or do not exist): no switch.
        int lane = cur % kWarpSize, warp = cur / kWarpSize;
        LaneSet group = me.group;
        LaneSet alive;
        for (int l = 0; l < kWarpSize; ++l) {
            int t = warp * kWarpSize + l;
            if (t >= cur && t < n && group.has(l)) alive.set(l);
        }
        LaneSet self;
        self.set(lane);
        if (alive == self || alive.empty()) {
            ThreadCtx* lanes[1] = {&me};
            me.combine(*this, lanes, 1);
            return;
        }
        enter_fiber_mode();  // keeps the collective's inputs already in th[cur]
    }
    ThreadCtx& m = th[cur];
    slots[cur].site = site;
    slots[cur].state = ThreadState::AtWarpOp;
    warps[m.warp].waiting.set(m.lane);
    if (!m.coalesce && try_complete(m.warp, m.group)) return;
    schedule();
}

EMU_RT_FN bool BlockCtx::complete_coalesced() {
    for (int w = 0; w < static_cast<int>(warps.size()); ++w) {
        const ThreadCtx* first = nullptr;
        LaneSet group;
        for (int l = 0; l < kWarpSize; ++l) {
            if (!warps[w].waiting.has(l)) continue;
            const ThreadCtx& c = th[w * kWarpSize + l];
            if (!c.coalesce) continue;
            if (!first) first = &c;
            if (same_site(slots[w * kWarpSize + l].site, slots[first - th.data()].site)) group.set(l);
        }
        if (!first) continue;
        for (int l = 0; l < kWarpSize; ++l)
            if (group.has(l)) {
                th[w * kWarpSize + l].group = group;
                th[w * kWarpSize + l].coalesce = false;
            }
        if (!try_complete(w, group)) continue;
        if (cur / kWarpSize == w && group.has(cur % kWarpSize)) {  // the caller waits in schedule()
            slots[cur].state = ThreadState::Ready;
            runq.push_back(cur);
        }
        return true;
    }
    return false;
}

EMU_RT_FN ThreadCtx& BlockCtx::current_ctx() {
    if (th.size() < static_cast<size_t>(n)) th.resize(n);
    ThreadCtx& c = th[cur];
    if (!fiber_mode) {
        c.lane = cur % kWarpSize;
        c.warp = cur / kWarpSize;
    }
    return c;
}

EMU_RT_FN void BlockCtx::report_mismatch(int warp, const LaneSet& lanes) {
    std::fflush(stdout);
    std::fprintf(stderr, "emu: error: lanes of warp %d in block (%u,%u,%u) meet in different warp operations:\n",
                 warp, idx.x, idx.y, idx.z);
    for (int l = 0; l < kWarpSize; ++l)
        if (lanes.has(l)) {
            const FiberSlot& c = slots[warp * kWarpSize + l];
            std::fprintf(stderr, "  lane %d at %s:%d\n", l, c.site.file, c.site.line);
        }
    std::fflush(stderr);
    std::_Exit(kExitDivergence);
}

EMU_RT_FN void BlockCtx::report_stall() {
    std::fflush(stdout);
    std::fprintf(stderr,
                 "emu: error: divergent barrier in block (%u,%u,%u): no thread of the block can go on\n",
                 idx.x, idx.y, idx.z);
    std::vector<int> shown;
    for (int t = 0; t < n; ++t) {
        const FiberSlot& c = slots[t];
        if (c.state != ThreadState::AtBarrier && c.state != ThreadState::AtWarpOp) continue;
        bool seen = false;
        for (int s : shown)
            seen = seen || (slots[s].state == c.state && same_site(slots[s].site, c.site));
        if (seen) continue;
        shown.push_back(t);
        int count = 0, first = -1, last = -1;
        for (int u = 0; u < n; ++u)
            if (slots[u].state == c.state && same_site(slots[u].site, c.site)) {
                ++count;
                if (first < 0) first = u;
                last = u;
            }
        std::fprintf(stderr, "%s:%d: %d thread(s) (%d..%d) wait at %s\n", c.site.file, c.site.line, count,
                     first, last, c.state == ThreadState::AtBarrier ? "a block barrier" : "a warp operation");
    }
    std::fprintf(stderr, "  %d thread(s) of %d have returned\n", n - live, n);
    std::fflush(stderr);
    std::_Exit(kExitDivergence);
}
#endif  // EMU_RT_BODY

inline BlockCtx& block() { return *tl_block; }

inline int block_barrier(Site site, int pred) { return tl_block->barrier(site, pred); }

// A region-split kernel (musify/emu/split.py) runs the regions of every thread of the block from
// the call of the block's first thread, in the order the fibers would; the other calls return.
inline bool split_skip() { return tl_block->cur != 0; }

inline char* dynamic_shared() { return tl_block->dyn_smem; }

// `extern __shared__ T x[];` at namespace scope (rewrite.py): reads as the running block's
// dynamic shared memory wherever it is used as a pointer or indexed.
template <class T>
struct DynamicShared {
    T* get() const { return reinterpret_cast<T*>(dynamic_shared()); }
    operator T*() const { return get(); }
    template <class U>
    explicit operator U*() const {
        return reinterpret_cast<U*>(dynamic_shared());
    }
    T& operator[](std::ptrdiff_t i) const { return get()[i]; }
};

}  // namespace emu

// Barriers take the caller's file and line (as default arguments, which also works for calls
// made through cooperative_groups) so that a divergent barrier is reported where it is.
inline void __syncthreads(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    emu::block_barrier({file, line}, 0);
}
inline int __syncthreads_count(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return emu::block_barrier({file, line}, pred);
}
inline int __syncthreads_and(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return emu::block_barrier({file, line}, pred) == emu::tl_block->n;
}
inline int __syncthreads_or(int pred, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return emu::block_barrier({file, line}, pred) != 0;
}
[[noreturn]] inline void __trap() { throw emu::Trap{}; }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
