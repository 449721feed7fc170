// Warp collectives: shuffles, votes, match, reductions and __syncwarp.
//
// Each one is a meeting of the lanes named by its mask (see lanes_of_mask in config.hpp for
// how a 32-bit mask reads on a 128-lane warp): every lane deposits its value, the last lane to
// arrive combines them, and each lane leaves with its own result. Lanes that have returned count
// as arrived; a shuffle from such a lane returns the caller's own value.
#pragma once
#include <cstring>
#include <type_traits>

#include "block.hpp"

namespace emu {

enum ShuffleKind { kShflIdx, kShflUp, kShflDown, kShflXor };

// The lane a shuffle reads, or -1 when it returns the caller's own value (CUDA's rules for
// `width`: segments of `width` lanes; reads past the end of a segment return one's own value).
inline int shuffle_source(int kind, int lane, int arg, int width) {
    int base = lane / width * width;
    switch (kind) {
        case kShflIdx:
            return base + ((arg % width) + width) % width;
        case kShflUp:
            return lane - base >= arg ? lane - arg : -1;
        case kShflDown:
            return lane - base + arg < width ? lane + arg : -1;
        default: {
            int src = lane ^ arg;
            return src < base + width && src < kWarpSize ? src : -1;
        }
    }
}

template <int Kind>
void combine_shuffle(BlockCtx&, ThreadCtx* const* lanes, int count) {
    ThreadCtx* by_lane[kWarpSize] = {};
    for (int i = 0; i < count; ++i) by_lane[lanes[i]->lane] = lanes[i];
    for (int i = 0; i < count; ++i) {
        ThreadCtx* c = lanes[i];
        int src = shuffle_source(Kind, c->lane, c->arg, c->width);
        const ThreadCtx* from = src >= 0 && by_lane[src] ? by_lane[src] : c;
        c->result[0] = from->payload[0];
        c->result[1] = from->payload[1];
    }
}

inline LaneSet needed_lanes(ThreadCtx* const* lanes, int count) {
    LaneSet s;
    for (int i = 0; i < count; ++i) s.set(lanes[i]->lane);
    return s;
}

enum VoteKind { kVoteBallot, kVoteAny, kVoteAll, kVoteSync, kRedAdd, kRedMin, kRedMax, kRedUMin, kRedUMax,
                kRedAnd, kRedOr, kRedXor, kMatchAny, kMatchAll, kTileBallot };

template <int Kind>
void combine_vote(BlockCtx&, ThreadCtx* const* lanes, int count) {
    LaneSet ballot;
    std::uint64_t acc = Kind == kRedAnd ? ~std::uint64_t(0) : 0;
    long long smin = 0x7fffffffLL, smax = -0x80000000LL;
    std::uint64_t umin = 0xffffffffu, umax = 0;
    for (int i = 0; i < count; ++i) {
        const ThreadCtx* c = lanes[i];
        std::uint64_t v = c->payload[0];
        if (v) ballot.set(c->lane);
        long long sv = static_cast<int>(static_cast<unsigned>(v));
        smin = std::min(smin, sv);
        smax = std::max(smax, sv);
        umin = std::min<std::uint64_t>(umin, static_cast<unsigned>(v));
        umax = std::max<std::uint64_t>(umax, static_cast<unsigned>(v));
        if (Kind == kRedAdd) acc += static_cast<unsigned>(v);
        if (Kind == kRedAnd) acc &= v;
        if (Kind == kRedOr) acc |= v;
        if (Kind == kRedXor) acc ^= v;
    }
    for (int i = 0; i < count; ++i) {
        ThreadCtx* c = lanes[i];
        std::uint64_t r = 0;
        switch (Kind) {
            case kVoteBallot: r = mask_of_lanes(ballot); break;
            case kTileBallot: {  // bits of the tile starting at lane `arg` (a tile never straddles a word)
                LaneSet tile = needed_lanes(lanes, count);
                r = ((ballot.w[c->arg >> 6] & tile.w[c->arg >> 6]) >> (c->arg & 63)) & 0xffffffffu;
                break;
            }
            case kVoteAny: r = !ballot.empty(); break;
            case kVoteAll: r = count > 0 && ballot == needed_lanes(lanes, count); break;
            case kRedMin: r = static_cast<unsigned>(static_cast<int>(smin)); break;
            case kRedMax: r = static_cast<unsigned>(static_cast<int>(smax)); break;
            case kRedUMin: r = umin; break;
            case kRedUMax: r = umax; break;
            case kMatchAny:
            case kMatchAll: {
                LaneSet same;
                for (int j = 0; j < count; ++j)
                    if (lanes[j]->payload[0] == c->payload[0] && lanes[j]->payload[1] == c->payload[1])
                        same.set(lanes[j]->lane);
                bool all = same == needed_lanes(lanes, count);
                r = Kind == kMatchAny ? mask_of_lanes(same) : (all ? mask_of_lanes(same) : 0);
                c->result[1] = all;
                break;
            }
            default: r = acc; break;
        }
        c->result[0] = r;
    }
}

// Run one collective for the current thread over `group`; returns its ThreadCtx with the result.
inline ThreadCtx& collective(Site site, const LaneSet& group, WarpCombine combine, std::uint64_t p0,
                             std::uint64_t p1, int arg, int width) {
    BlockCtx& b = *tl_block;
    ThreadCtx& me = b.current_ctx();
    LaneSet g = group;
    g.set(b.cur % kWarpSize);  // a lane always takes part in its own collective
    me.group = g;
    me.combine = combine;
    me.payload[0] = p0;
    me.payload[1] = p1;
    me.arg = arg;
    me.width = width;
    me.coalesce = false;
    b.warp_collective(site);
    return b.th[b.cur];
}

template <class T>
struct Payload {
    static_assert(sizeof(T) <= 16 && std::is_trivially_copyable<T>::value,
                  "warp shuffles take trivially copyable values of at most 16 bytes");
    std::uint64_t w[2] = {0, 0};
    explicit Payload(const T& v) { std::memcpy(w, &v, sizeof(T)); }
    static T from(const std::uint64_t* r) {
        T v;
        std::memcpy(&v, r, sizeof(T));
        return v;
    }
};

template <int Kind, class T>
T shuffle(Site site, const LaneSet& group, T var, int arg, int width) {
    if (width <= 0 || width > kWarpSize || (width & (width - 1))) width = kWarpSize;
    Payload<T> p(var);
    ThreadCtx& me = collective(site, group, &combine_shuffle<Kind>, p.w[0], p.w[1], arg, width);
    return Payload<T>::from(me.result);
}

template <int Kind>
std::uint64_t vote(Site site, const LaneSet& group, std::uint64_t v0, std::uint64_t v1 = 0, int arg = 0) {
    return collective(site, group, &combine_vote<Kind>, v0, v1, arg, kWarpSize).result[0];
}

}  // namespace emu

#define EMU_SITE_ARGS const char *file = __builtin_FILE(), int line = __builtin_LINE()

template <class T>
T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize, EMU_SITE_ARGS) {
    return emu::shuffle<emu::kShflIdx>({file, line}, emu::lanes_of_mask(mask), var, srcLane, width);
}
template <class T>
T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize, EMU_SITE_ARGS) {
    return emu::shuffle<emu::kShflUp>({file, line}, emu::lanes_of_mask(mask), var, static_cast<int>(delta), width);
}
template <class T>
T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize, EMU_SITE_ARGS) {
    return emu::shuffle<emu::kShflDown>({file, line}, emu::lanes_of_mask(mask), var, static_cast<int>(delta),
                                        width);
}
template <class T>
T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = warpSize, EMU_SITE_ARGS) {
    return emu::shuffle<emu::kShflXor>({file, line}, emu::lanes_of_mask(mask), var, laneMask, width);
}
inline unsigned __ballot_sync(unsigned mask, int pred, EMU_SITE_ARGS) {
    return static_cast<unsigned>(emu::vote<emu::kVoteBallot>({file, line}, emu::lanes_of_mask(mask), pred != 0));
}
inline int __any_sync(unsigned mask, int pred, EMU_SITE_ARGS) {
    return static_cast<int>(emu::vote<emu::kVoteAny>({file, line}, emu::lanes_of_mask(mask), pred != 0));
}
inline int __all_sync(unsigned mask, int pred, EMU_SITE_ARGS) {
    return static_cast<int>(emu::vote<emu::kVoteAll>({file, line}, emu::lanes_of_mask(mask), pred != 0));
}
inline int __uni_sync(unsigned mask, int pred, EMU_SITE_ARGS) {
    auto set = emu::lanes_of_mask(mask);
    emu::Site site{file, line};
    return emu::vote<emu::kVoteAll>(site, set, pred != 0) || !emu::vote<emu::kVoteAny>(site, set, pred != 0);
}
inline void __syncwarp(unsigned mask = 0xffffffffu, EMU_SITE_ARGS) {
    emu::vote<emu::kVoteSync>({file, line}, emu::lanes_of_mask(mask), 0);
}
// Lanes of the caller's warp that have not returned (no meeting: it does not synchronise).
inline unsigned __activemask() {
    emu::BlockCtx& b = *emu::tl_block;
    int warp = b.cur / emu::kWarpSize;
    emu::LaneSet s;
    for (int l = 0; l < emu::kWarpSize; ++l) {
        int t = warp * emu::kWarpSize + l;
        bool alive = t < b.n && (b.fiber_mode ? b.slots[t].state != emu::ThreadState::Done : t >= b.cur);
        if (alive) s.set(l);
    }
    return emu::mask_of_lanes(s);
}
inline unsigned __reduce_add_sync(unsigned mask, unsigned v, EMU_SITE_ARGS) {
    return static_cast<unsigned>(emu::vote<emu::kRedAdd>({file, line}, emu::lanes_of_mask(mask), v));
}
inline int __reduce_add_sync(unsigned mask, int v, EMU_SITE_ARGS) {
    return static_cast<int>(emu::vote<emu::kRedAdd>({file, line}, emu::lanes_of_mask(mask), static_cast<unsigned>(v)));
}
inline unsigned __reduce_min_sync(unsigned mask, unsigned v, EMU_SITE_ARGS) {
    return static_cast<unsigned>(emu::vote<emu::kRedUMin>({file, line}, emu::lanes_of_mask(mask), v));
}
inline int __reduce_min_sync(unsigned mask, int v, EMU_SITE_ARGS) {
    return static_cast<int>(emu::vote<emu::kRedMin>({file, line}, emu::lanes_of_mask(mask), static_cast<unsigned>(v)));
}
inline unsigned __reduce_max_sync(unsigned mask, unsigned v, EMU_SITE_ARGS) {
    return static_cast<unsigned>(emu::vote<emu::kRedUMax>({file, line}, emu::lanes_of_mask(mask), v));
}
inline int __reduce_max_sync(unsigned mask, int v, EMU_SITE_ARGS) {
    return static_cast<int>(emu::vote<emu::kRedMax>({file, line}, emu::lanes_of_mask(mask), static_cast<unsigned>(v)));
}
inline unsigned __reduce_and_sync(unsigned mask, unsigned v, EMU_SITE_ARGS) {
    return static_cast<unsigned>(emu::vote<emu::kRedAnd>({file, line}, emu::lanes_of_mask(mask), v));
}
inline unsigned __reduce_or_sync(unsigned mask, unsigned v, EMU_SITE_ARGS) {
    return static_cast<unsigned>(emu::vote<emu::kRedOr>({file, line}, emu::lanes_of_mask(mask), v));
}
inline unsigned __reduce_xor_sync(unsigned mask, unsigned v, EMU_SITE_ARGS) {
    return static_cast<unsigned>(emu::vote<emu::kRedXor>({file, line}, emu::lanes_of_mask(mask), v));
}
template <class T>
unsigned __match_any_sync(unsigned mask, T value, EMU_SITE_ARGS) {
    emu::Payload<T> p(value);
    return static_cast<unsigned>(emu::vote<emu::kMatchAny>({file, line}, emu::lanes_of_mask(mask), p.w[0], p.w[1]));
}
template <class T>
unsigned __match_all_sync(unsigned mask, T value, int* pred, EMU_SITE_ARGS) {
    emu::Payload<T> p(value);
    emu::ThreadCtx& me = emu::collective({file, line}, emu::lanes_of_mask(mask), &emu::combine_vote<emu::kMatchAll>,
                                         p.w[0], p.w[1], 0, emu::kWarpSize);
    *pred = static_cast<int>(me.result[1]);
    return static_cast<unsigned>(me.result[0]);
}
