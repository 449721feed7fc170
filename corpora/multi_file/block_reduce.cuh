// block_reduce.cuh -- device helpers used by kernels.cu.
#pragma once

#include "stats_api.h"

// Sum of one value per thread over the block; `scratch` holds blockDim.x values.
__device__ inline long long block_reduce_sum(long long v, long long* scratch)
{
    scratch[threadIdx.x] = v;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (threadIdx.x < stride) scratch[threadIdx.x] += scratch[threadIdx.x + stride];
        __syncthreads();
    }
    return scratch[0];
}
