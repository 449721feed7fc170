// cooperative_groups: thread blocks, tiles (static and dynamic) and the grid of a cooperative
// launch, on top of the block barrier and the warp collectives.
#pragma once
#include <type_traits>

#include "runtime.hpp"

namespace emu {

// this_grid().sync(): a block barrier, one thread of the block meets the other blocks, then a
// second block barrier lets the block go on.
inline void grid_sync(Site site) {
    BlockCtx& b = *tl_block;
    if (!b.shared->cooperative) {
        std::fflush(stdout);
        std::fprintf(stderr, "%s:%d: emu: error: grid.sync() in a kernel that was not launched with "
                     "cudaLaunchCooperativeKernel\n", site.file, site.line);
        std::_Exit(kExitDivergence);
    }
    if (b.n == 1) {
        b.shared->grid_barrier(*b.shared);
        return;
    }
    b.barrier(site, 0);
    ThreadCtx& me = b.th[b.cur];
    ++me.grid_syncs;
    if (b.grid_syncs_done < me.grid_syncs) {
        b.grid_syncs_done = me.grid_syncs;
        b.shared->grid_barrier(*b.shared);
    }
    b.barrier(site, 0);
}

inline unsigned linear_thread() { return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x; }

// The lanes of the caller's warp that belong to its tile of `size` threads.
inline LaneSet tile_lanes(unsigned size) {
    int lane = static_cast<int>(linear_thread() % kWarpSize);
    int n = static_cast<int>(size);
    int base = lane / n * n;
    LaneSet s;
    for (int l = base; l < base + n && l < kWarpSize; ++l) s.set(l);
    return s;
}

// coalesced_threads(): the lanes of the warp that reach this call together. It is a meeting that
// completes when no other lane of the warp can arrive (each has returned or waits elsewhere), so
// in `if (p) { auto g = coalesced_threads(); ... }` the group is the lanes for which p held.
inline void combine_coalesce(BlockCtx&, ThreadCtx* const* lanes, int count) {
    LaneSet s;
    for (int i = 0; i < count; ++i) s.set(lanes[i]->lane);
    for (int i = 0; i < count; ++i) {
        lanes[i]->result[0] = s.w[0];
        lanes[i]->result[1] = s.w[1];
    }
}

inline LaneSet coalesce(Site site) {
    BlockCtx& b = *tl_block;
    ThreadCtx& me = b.current_ctx();
    me.group = LaneSet::first(kWarpSize);
    me.combine = &combine_coalesce;
    me.coalesce = true;
    b.warp_collective(site);
    ThreadCtx& done = b.th[b.cur];
    done.coalesce = false;
    return LaneSet{{done.result[0], done.result[1]}};
}

inline int popcount(const LaneSet& s) { return __builtin_popcountll(s.w[0]) + __builtin_popcountll(s.w[1]); }

// The lane of rank `rank` in `s` (or -1).
inline int lane_of_rank(const LaneSet& s, int rank) {
    for (int l = 0; l < kWarpSize; ++l)
        if (s.has(l) && rank-- == 0) return l;
    return -1;
}

}  // namespace emu

namespace cooperative_groups {

#define EMU_CG_SITE const char *file = __builtin_FILE(), int line = __builtin_LINE()

class thread_block {
   public:
    void sync(EMU_CG_SITE) const { emu::block_barrier({file, line}, 0); }
    unsigned thread_rank() const { return emu::linear_thread(); }
    unsigned size() const { return blockDim.x * blockDim.y * blockDim.z; }
    unsigned num_threads() const { return size(); }
    dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
    dim3 group_dim() const { return dim3(blockDim.x, blockDim.y, blockDim.z); }
    dim3 dim_threads() const { return group_dim(); }
};

inline thread_block this_thread_block() { return thread_block(); }
inline void sync(const thread_block& g, EMU_CG_SITE) { g.sync(file, line); }

class grid_group {
   public:
    void sync(EMU_CG_SITE) const { emu::grid_sync({file, line}); }
    bool is_valid() const { return emu::tl_block && emu::tl_block->shared->cooperative; }
    unsigned long long num_blocks() const { return 1ull * gridDim.x * gridDim.y * gridDim.z; }
    unsigned long long block_rank() const { return (1ull * blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x; }
    unsigned long long size() const { return num_blocks() * blockDim.x * blockDim.y * blockDim.z; }
    unsigned long long num_threads() const { return size(); }
    unsigned long long thread_rank() const { return block_rank() * blockDim.x * blockDim.y * blockDim.z + emu::linear_thread(); }
    dim3 group_dim() const { return dim3(gridDim.x, gridDim.y, gridDim.z); }
    dim3 dim_blocks() const { return group_dim(); }
    dim3 block_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
};

inline grid_group this_grid() { return grid_group(); }
inline void sync(const grid_group& g, EMU_CG_SITE) { g.sync(file, line); }

// A tile of `size_` consecutive threads (at most a warp) with its collectives.
class thread_group {
   public:
    explicit thread_group(unsigned size) : size_(size) {}
    unsigned size() const { return size_; }
    unsigned num_threads() const { return size_; }
    unsigned thread_rank() const { return emu::linear_thread() % size_; }
    unsigned meta_group_rank() const { return emu::linear_thread() / size_; }
    unsigned meta_group_size() const {
        unsigned block = blockDim.x * blockDim.y * blockDim.z;
        return (block + size_ - 1) / size_;
    }
    void sync(EMU_CG_SITE) const {
        if (size_ > static_cast<unsigned>(emu::kWarpSize))
            emu::block_barrier({file, line}, 0);
        else
            emu::vote<emu::kVoteSync>({file, line}, lanes(), 0);
    }
    template <class T>
    T shfl(T v, int src, EMU_CG_SITE) const {
        return emu::shuffle<emu::kShflIdx>({file, line}, lanes(), v, src, static_cast<int>(size_));
    }
    template <class T>
    T shfl_down(T v, unsigned d, EMU_CG_SITE) const {
        return emu::shuffle<emu::kShflDown>({file, line}, lanes(), v, static_cast<int>(d), static_cast<int>(size_));
    }
    template <class T>
    T shfl_up(T v, unsigned d, EMU_CG_SITE) const {
        return emu::shuffle<emu::kShflUp>({file, line}, lanes(), v, static_cast<int>(d), static_cast<int>(size_));
    }
    template <class T>
    T shfl_xor(T v, unsigned m, EMU_CG_SITE) const {
        return emu::shuffle<emu::kShflXor>({file, line}, lanes(), v, static_cast<int>(m), static_cast<int>(size_));
    }
    // Bit i is the tile's thread of rank i.
    unsigned ballot(int pred, EMU_CG_SITE) const {
        int base = static_cast<int>(emu::linear_thread() % emu::kWarpSize / size_ * size_);
        return static_cast<unsigned>(emu::vote<emu::kTileBallot>({file, line}, lanes(), pred != 0, 0, base));
    }
    bool any(int pred, EMU_CG_SITE) const { return emu::vote<emu::kVoteAny>({file, line}, lanes(), pred != 0) != 0; }
    bool all(int pred, EMU_CG_SITE) const { return emu::vote<emu::kVoteAll>({file, line}, lanes(), pred != 0) != 0; }

   protected:
    emu::LaneSet lanes() const { return emu::tile_lanes(size_); }
    unsigned size_;
};

template <unsigned Size>
class thread_block_tile : public thread_group {
    static_assert(Size && !(Size & (Size - 1)) && Size <= static_cast<unsigned>(EMU_WARP_SIZE),
                  "a tile is a power of two no wider than a warp");

   public:
    thread_block_tile() : thread_group(Size) {}
    static constexpr unsigned size() { return Size; }
    static constexpr unsigned num_threads() { return Size; }
};

// The group coalesced_threads() returns: ranks are the lanes' order within the group.
class coalesced_group {
   public:
    explicit coalesced_group(emu::LaneSet lanes) : lanes_(lanes) {}
    unsigned size() const { return static_cast<unsigned>(emu::popcount(lanes_)); }
    unsigned num_threads() const { return size(); }
    unsigned thread_rank() const {
        int lane = static_cast<int>(emu::linear_thread() % emu::kWarpSize);
        emu::LaneSet below;
        for (int l = 0; l < lane; ++l)
            if (lanes_.has(l)) below.set(l);
        return static_cast<unsigned>(emu::popcount(below));
    }
    unsigned meta_group_rank() const { return 0; }
    unsigned meta_group_size() const { return 1; }
    void sync(EMU_CG_SITE) const { emu::vote<emu::kVoteSync>({file, line}, lanes_, 0); }
    template <class T>
    T shfl(T v, unsigned src_rank, EMU_CG_SITE) const {
        return from_rank({file, line}, v, static_cast<int>(src_rank % size()));
    }
    template <class T>
    T shfl_down(T v, unsigned d, EMU_CG_SITE) const {
        unsigned r = thread_rank() + d;
        return from_rank({file, line}, v, r < size() ? static_cast<int>(r) : -1);
    }
    template <class T>
    T shfl_up(T v, unsigned d, EMU_CG_SITE) const {
        unsigned r = thread_rank();
        return from_rank({file, line}, v, r >= d ? static_cast<int>(r - d) : -1);
    }
    template <class T>
    T shfl_xor(T v, unsigned m, EMU_CG_SITE) const {
        unsigned r = thread_rank() ^ m;
        return from_rank({file, line}, v, r < size() ? static_cast<int>(r) : -1);
    }
    // Bit i is the group's thread of rank i.
    unsigned ballot(int pred, EMU_CG_SITE) const {
        unsigned bits = 0;
        for (unsigned r = 0; r < size(); ++r) bits |= (shfl(pred != 0 ? 1u : 0u, r, file, line) & 1u) << r;
        return bits;
    }
    bool any(int pred, EMU_CG_SITE) const { return emu::vote<emu::kVoteAny>({file, line}, lanes_, pred != 0) != 0; }
    bool all(int pred, EMU_CG_SITE) const { return emu::vote<emu::kVoteAll>({file, line}, lanes_, pred != 0) != 0; }

   private:
    // The value of the group's thread of rank `rank`; rank -1: one's own value.
    template <class T>
    T from_rank(emu::Site site, T v, int rank) const {
        int lane = rank < 0 ? static_cast<int>(emu::linear_thread() % emu::kWarpSize) : emu::lane_of_rank(lanes_, rank);
        return emu::shuffle<emu::kShflIdx>(site, lanes_, v, lane, emu::kWarpSize);
    }
    emu::LaneSet lanes_;
};

inline coalesced_group coalesced_threads(EMU_CG_SITE) { return coalesced_group(emu::coalesce({file, line})); }

template <unsigned Size, class Parent>
thread_block_tile<Size> tiled_partition(const Parent&) {
    return thread_block_tile<Size>();
}
template <class Parent>
thread_group tiled_partition(const Parent&, unsigned size) {
    return thread_group(size);
}

#undef EMU_CG_SITE

}  // namespace cooperative_groups
