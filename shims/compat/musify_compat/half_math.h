// musify compatibility shim: exponentials of half and half2.
//
// Written for musify (Apache-2.0). MUSA's half header lacks hexp/h2exp: llama.cpp's hand-written
// MUSA vendor header (ggml/src/ggml-cuda/vendors/musa.h) had to supply them. musify rewrites
// hexp -> musify_hexp and h2exp -> musify_h2exp and includes this header.
//
// Computed in float and rounded once to half: for every finite half input the result is the
// correctly rounded exp of the input's float value up to expf's own error (<= 2 ulp in float),
// far below half's resolution, so it matches CUDA's hexp except possibly in the last half ulp.
// Put <musify>/shims/compat on the include path (-I) to use it.
#pragma once

#if defined(__MUSACC__)
#include <musa_fp16.h>
#else
#include <cuda_fp16.h>
#endif

static __device__ __forceinline__ __half musify_hexp(const __half x)
{
    return __float2half(expf(__half2float(x)));
}

static __device__ __forceinline__ __half2 musify_h2exp(const __half2 x)
{
    const float2 f = __half22float2(x);
    return __floats2half2_rn(expf(f.x), expf(f.y));
}
