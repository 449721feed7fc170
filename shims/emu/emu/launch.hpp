// Kernel launches: configuration checks, the pool of OS threads that runs the blocks of a grid,
// cooperative launches (every block on an OS thread of its own, so that a grid barrier can
// complete) and the `launch_via(call)(config)(args)` form that rewrite.py turns `<<<>>>` into.
// Launches are synchronous: when a launch returns, the grid has finished.
#pragma once
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "block.hpp"
#include "errors.hpp"

namespace emu {

struct Stream;  // defined in runtime.hpp; launches ignore it (everything is synchronous)

constexpr int kMultiProcessors = 16;
constexpr int kMaxThreadsPerMultiProcessor = 2048;
constexpr int kMaxBlocksPerMultiProcessor = 32;
constexpr size_t kSharedPerBlock = 48 * 1024;
constexpr size_t kSharedPerBlockOptin = 160 * 1024;
constexpr size_t kSharedPerMultiProcessor = 164 * 1024;

// Blocks of `threads` threads with `smem` bytes of dynamic shared memory that fit on one
// multiprocessor at once (what occupancy queries and cooperative launches go by).
inline int blocks_per_multiprocessor(int threads, size_t smem) {
    if (threads <= 0) return 0;
    int warps = (threads + kWarpSize - 1) / kWarpSize;
    int by_threads = kMaxThreadsPerMultiProcessor / (warps * kWarpSize);
    int by_smem = smem ? static_cast<int>(kSharedPerMultiProcessor / smem) : kMaxBlocksPerMultiProcessor;
    return std::max(0, std::min({by_threads, by_smem, kMaxBlocksPerMultiProcessor}));
}

inline int check_config(const dim3& g, const dim3& b, size_t smem) {
    unsigned long long threads = 1ull * b.x * b.y * b.z;
    if (!b.x || !b.y || !b.z || b.x > 1024 || b.y > 1024 || b.z > 64 || threads > kMaxThreadsPerBlock)
        return ErrorInvalidConfiguration;
    if (!g.x || !g.y || !g.z || g.x > 0x7fffffffu || g.y > 65535 || g.z > 65535) return ErrorInvalidConfiguration;
    if (smem > kSharedPerBlockOptin) return ErrorInvalidValue;
    return Success;
}

// The cores this process may run on (its affinity mask: `taskset` and container cpusets narrow it),
// else every core of the machine.
inline int usable_cores() {
#ifdef __linux__
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
    return static_cast<int>(std::thread::hardware_concurrency());
}

struct alignas(128) SharedChunk {
    char bytes[128];
};

struct GridSpec {
    dim3 grid, block;
    size_t smem = 0;
    void (*invoke)(void*) = nullptr;
    void* closure = nullptr;
    void (*run_loop)(BlockCtx&) = nullptr;
};

// BlockCtx::run for closure type C, with C::invoke inlined into the loop over threads.
template <class C>
void run_block_loop(BlockCtx& b) {
    C* closure = static_cast<C*>(b.closure);
    b.run_threads([closure] { C::invoke(closure); });
}

#ifdef MUSIFY_EMU_RACECHECK
namespace race {
inline void block_begin(BlockCtx& b);
inline void block_end();
}  // namespace race
#endif

// The grid runner, compiled once into the runtime with EMU_RUNTIME_LINKED (config.hpp).
EMU_RT_FN BlockCtx& worker_block();  // the calling OS thread's block (reused by every block it runs)
EMU_RT_FN void run_one_block(const GridSpec& s, GridShared& shared, unsigned long long linear);
EMU_RT_FN void grid_barrier_wait(GridShared& shared);
EMU_RT_FN int run_grid(const GridSpec& s, bool cooperative);

// The kernel and the arguments of one launch; each emulated thread gets its own copy of the
// parameters, as on a GPU.
template <class... P>
struct Closure {
    void (*kernel)(P...);
    std::tuple<std::decay_t<P>...> params;
    static void invoke(void* self) {
        auto* c = static_cast<Closure*>(self);
        std::apply(c->kernel, c->params);
    }
};

// One launch of `call` (a generic lambda that calls the kernel with the arguments it is given,
// so template arguments are deduced from the launch's arguments as nvcc deduces them).
template <class F, class... A>
struct DeducedClosure {
    F call;
    std::tuple<A...> args;
    static void invoke(void* self) {
        auto* c = static_cast<DeducedClosure*>(self);
        std::apply(c->call, c->args);  // the kernel's by-value parameters copy these per thread
    }
};

template <class F>
struct Launch {
    F call;
    dim3 grid, block;
    size_t smem;
    template <class... A>
    void operator()(A&&... args) const {
        DeducedClosure<F, std::decay_t<A>...> c{call, std::tuple<std::decay_t<A>...>(std::forward<A>(args)...)};
        using C = DeducedClosure<F, std::decay_t<A>...>;
        run_grid(GridSpec{grid, block, smem, &C::invoke, &c, &run_block_loop<C>}, false);
    }
};

template <class F>
struct KernelRef {
    F call;
    Launch<F> operator()(dim3 grid, dim3 block, size_t smem = 0, Stream* = nullptr) const {
        return Launch<F>{call, grid, block, smem};
    }
};

// rewrite.py turns `k<<<g, b, s, st>>>(args)` into
// `::emu::launch_via([&](auto&... a) { k(a...); })(g, b, s, st)(args)`.
template <class F>
KernelRef<F> launch_via(F call) {
    return KernelRef<F>{call};
}

// cudaLaunchKernel / cudaLaunchCooperativeKernel: arguments as an array of pointers to them.
template <class... P, size_t... I>
std::tuple<std::decay_t<P>...> params_from(void** args, std::index_sequence<I...>) {
    return std::tuple<std::decay_t<P>...>(*static_cast<std::decay_t<P>*>(args[I])...);
}

template <class... P>
int launch_with_args(void (*kernel)(P...), dim3 grid, dim3 block, void** args, size_t smem, bool cooperative) {
    if (!kernel) return result(ErrorInvalidDeviceFunction);
    if (sizeof...(P) && !args) return result(ErrorInvalidValue);
    Closure<P...> c{kernel, params_from<P...>(args, std::index_sequence_for<P...>{})};
    return run_grid(GridSpec{grid, block, smem, &Closure<P...>::invoke, &c, &run_block_loop<Closure<P...>>}, cooperative);
}

// Kernels launched through `const void*` (cudaLaunchKernel((void*)k, ...)): rewrite.py registers
// every non-template kernel a file defines, so the address leads back to the parameter types.
using ErasedLaunch = int (*)(const void*, dim3, dim3, void**, size_t, bool);

EMU_RT_FN void register_erased(const void* kernel, ErasedLaunch launch);
EMU_RT_FN int launch_registered(const void* f, dim3 grid, dim3 block, void** args, size_t smem, bool cooperative);

template <class... P>
int erased_launch(const void* f, dim3 grid, dim3 block, void** args, size_t smem, bool cooperative) {
    return launch_with_args(reinterpret_cast<void (*)(P...)>(const_cast<void*>(f)), grid, block, args, smem,
                            cooperative);
}

template <class... P>
bool register_kernel(void (*kernel)(P...)) {
    register_erased(reinterpret_cast<const void*>(kernel), &erased_launch<P...>);
    return true;
}

#if EMU_RT_BODY
// The OS threads that run blocks: the launching thread plus (cores - 1) workers, or EMU_THREADS.
class Pool {
   public:
    static Pool& get() {
        static Pool* pool = new Pool();  // never destroyed: workers may still wait at exit
        return *pool;
    }
    int size() const { return static_cast<int>(workers_.size()) + 1; }

    // Run work(participant) on `count` OS threads (the caller is participant 0).
    void run(int count, const std::function<void(int)>& work) {
        count = std::max(1, std::min(count, size()));
        if (count == 1) {
            work(0);
            return;
        }
        std::lock_guard<std::mutex> one_launch(launch_mutex_);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            work_ = &work;
            wanted_ = count - 1;
            pending_ = count - 1;
            next_id_ = 1;
            ++generation_;
        }
        wake_.notify_all();
        work(0);
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [this] { return pending_ == 0; });
        work_ = nullptr;
    }

   private:
    Pool() {
        int n = usable_cores();
        if (const char* env = std::getenv("EMU_THREADS")) n = std::atoi(env);
#ifdef MUSIFY_EMU_RACECHECK
        n = 1;  // blocks in a fixed order, so that the race reported is always the same one
#endif
        n = std::max(1, n);
        for (int i = 1; i < n; ++i) workers_.emplace_back([this] { loop(); });
        for (auto& t : workers_) t.detach();
    }
    void loop() {
        unsigned long long seen = 0;
        for (;;) {
            const std::function<void(int)>* work;
            int id;
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return generation_ != seen && wanted_ > 0; });
                seen = generation_;
                --wanted_;
                id = next_id_++;
                work = work_;
            }
            (*work)(id);
            std::lock_guard<std::mutex> lock(mutex_);
            if (--pending_ == 0) done_.notify_all();
        }
    }
    std::vector<std::thread> workers_;
    std::mutex launch_mutex_, mutex_;
    std::condition_variable wake_, done_;
    const std::function<void(int)>* work_ = nullptr;
    int wanted_ = 0, pending_ = 0, next_id_ = 0;
    unsigned long long generation_ = 0;
};

EMU_RT_FN BlockCtx& worker_block() {
    static thread_local BlockCtx ctx;
    return ctx;
}


EMU_RT_FN void run_one_block(const GridSpec& s, GridShared& shared, unsigned long long linear) {
    BlockCtx& b = worker_block();
    if (shared.trapped) return;  // a trap ends the grid: later blocks do not start
    b.n = static_cast<int>(s.block.x * s.block.y * s.block.z);
    b.dim = uint3{s.block.x, s.block.y, s.block.z};
    b.grid = uint3{s.grid.x, s.grid.y, s.grid.z};
    b.idx = uint3{static_cast<unsigned>(linear % s.grid.x), static_cast<unsigned>(linear / s.grid.x % s.grid.y),
                  static_cast<unsigned>(linear / s.grid.x / s.grid.y)};
    b.invoke = s.invoke;
    b.run_loop = s.run_loop;
    b.closure = s.closure;
    b.shared = &shared;
    if (s.smem) {
        std::vector<char>& buf = b.dyn_buffer;
        buf.resize(s.smem + sizeof(SharedChunk));
        auto aligned = (reinterpret_cast<std::uintptr_t>(buf.data()) + 127) & ~std::uintptr_t(127);
        b.dyn_smem = reinterpret_cast<char*>(aligned);
        std::memset(b.dyn_smem, 0xFF, s.smem);
    } else {
        b.dyn_smem = nullptr;
    }
    b.dyn_smem_size = s.smem;
    tl_block = &b;
    ::blockIdx = b.idx;
    ::blockDim = b.dim;
    ::gridDim = b.grid;
    EMU_RC_HOOK(block_begin(b));
    b.run();
    EMU_RC_HOOK(block_end());
    tl_block = nullptr;
}

// A barrier for all blocks of a cooperative grid (each on its own OS thread).
struct GridBarrier {
    std::mutex mutex;
    std::condition_variable cv;
    unsigned long long blocks = 0, arrived = 0, generation = 0;
};

EMU_RT_FN void grid_barrier_wait(GridShared& shared) {
    auto& g = *static_cast<GridBarrier*>(shared.grid_barrier_state);
    std::unique_lock<std::mutex> lock(g.mutex);
    unsigned long long gen = g.generation;
    if (++g.arrived == g.blocks) {
        g.arrived = 0;
        ++g.generation;
        g.cv.notify_all();
    } else {
        g.cv.wait(lock, [&] { return g.generation != gen; });
    }
}

EMU_RT_FN int run_grid(const GridSpec& s, bool cooperative) {
    int sticky = sticky_error().load();
    if (sticky != Success) return result(sticky);
    int e = check_config(s.grid, s.block, s.smem);
    if (e != Success) return result(e);
    unsigned long long blocks = 1ull * s.grid.x * s.grid.y * s.grid.z;
    GridShared shared;
    int threads = static_cast<int>(s.block.x * s.block.y * s.block.z);
    if (cooperative) {
        if (blocks > 1ull * blocks_per_multiprocessor(threads, s.smem) * kMultiProcessors)
            return result(ErrorCooperativeLaunchTooLarge);
        GridBarrier barrier;
        barrier.blocks = blocks;
        shared.cooperative = true;
        shared.grid_barrier = &grid_barrier_wait;
        shared.grid_barrier_state = &barrier;
        std::vector<std::thread> team;
        for (unsigned long long i = 1; i < blocks; ++i)
            team.emplace_back([&, i] { run_one_block(s, shared, i); });
        run_one_block(s, shared, 0);
        for (auto& t : team) t.join();
    } else {
        // OS threads take blocks in chunks (about 64 per thread over the grid), so a grid of many
        // small blocks does not bounce the counter's cache line between cores at every block.
        std::atomic<unsigned long long> next{0};
        const unsigned long long chunk = std::max<unsigned long long>(1, blocks / (64ull * Pool::get().size()));
        Pool::get().run(static_cast<int>(std::min<unsigned long long>(blocks, 1u << 30)), [&](int) {
            for (unsigned long long i; (i = next.fetch_add(chunk, std::memory_order_relaxed)) < blocks;)
                for (unsigned long long j = i, end = std::min(blocks, i + chunk); j < end; ++j)
                    run_one_block(s, shared, j);
        });
    }
    return result(shared.trapped ? ErrorLaunchFailure : Success);
}

inline std::map<const void*, ErasedLaunch>& kernel_registry() {
    static std::map<const void*, ErasedLaunch> registry;
    return registry;
}

EMU_RT_FN void register_erased(const void* kernel, ErasedLaunch launch) { kernel_registry()[kernel] = launch; }

EMU_RT_FN int launch_registered(const void* f, dim3 grid, dim3 block, void** args, size_t smem, bool cooperative) {
    auto it = kernel_registry().find(f);
    if (it == kernel_registry().end()) {
        std::fprintf(stderr, "emu: a kernel launched through a void pointer is not known (only non-template "
                     "kernels defined in a rewritten source are)\n");
        return result(ErrorInvalidDeviceFunction);
    }
    return it->second(f, grid, block, args, smem, cooperative);
}
#endif  // EMU_RT_BODY

}  // namespace emu
