// musify compatibility shim: the sm_80 warp reduction intrinsics for any warp width.
//
// Written for musify (Apache-2.0). __reduce_{add,min,max}_sync are sm_80 intrinsics that Moore
// Threads' own mapping tables (torch_musa utils/mapping/*.json) do not list, and MUSA warps are
// 128 lanes on mp_21/mp_22 (MUSA_FACTS section 2). This shim reduces with __shfl_xor_sync over
// warpSize lanes, so it is right for any warp width.
//
// Limitation: like a butterfly reduction, it assumes that every lane of the warp takes part (the
// mask is the full warp). With a partial mask the result is undefined here, while CUDA reduces over
// the masked lanes; musify's MU2060 note at each rewritten call points here.
// Put <musify>/shims/compat on the include path (-I) to use it.
#pragma once

template <typename T, typename Op>
static __device__ __forceinline__ T musify_warp_butterfly(unsigned int mask, T value, Op op)
{
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
        value = op(value, __shfl_xor_sync(mask, value, offset));
    }
    return value;
}

struct musify_add_op {
    template <typename T>
    __device__ T operator()(T a, T b) const { return a + b; }
};
struct musify_min_op {
    template <typename T>
    __device__ T operator()(T a, T b) const { return b < a ? b : a; }
};
struct musify_max_op {
    template <typename T>
    __device__ T operator()(T a, T b) const { return a < b ? b : a; }
};

static __device__ __forceinline__ unsigned int musify_reduce_add_sync(unsigned int mask, unsigned int value)
{
    return musify_warp_butterfly(mask, value, musify_add_op());
}
static __device__ __forceinline__ int musify_reduce_add_sync(unsigned int mask, int value)
{
    return musify_warp_butterfly(mask, value, musify_add_op());
}
static __device__ __forceinline__ unsigned int musify_reduce_min_sync(unsigned int mask, unsigned int value)
{
    return musify_warp_butterfly(mask, value, musify_min_op());
}
static __device__ __forceinline__ int musify_reduce_min_sync(unsigned int mask, int value)
{
    return musify_warp_butterfly(mask, value, musify_min_op());
}
static __device__ __forceinline__ unsigned int musify_reduce_max_sync(unsigned int mask, unsigned int value)
{
    return musify_warp_butterfly(mask, value, musify_max_op());
}
static __device__ __forceinline__ int musify_reduce_max_sync(unsigned int mask, int value)
{
    return musify_warp_butterfly(mask, value, musify_max_op());
}
