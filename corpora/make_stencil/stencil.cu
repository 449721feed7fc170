// stencil.cu -- the stencil kernel: each block stages its tile and a one-element halo in shared
// memory.
#include "stencil.cuh"

constexpr int TILE = 256;

__global__ void stencil_kernel(const float* in, float* out, int n, float w0, float w1, float w2)
{
    __shared__ float tile[TILE + 2];
    const int i = blockIdx.x * TILE + threadIdx.x;
    tile[threadIdx.x + 1] = i < n ? in[i] : 0.0f;
    if (threadIdx.x == 0) tile[0] = (i > 0 && i - 1 < n) ? in[i - 1] : 0.0f;
    if (threadIdx.x == TILE - 1) tile[TILE + 1] = i + 1 < n ? in[i + 1] : 0.0f;
    __syncthreads();
    if (i < n) {
        out[i] = w0 * tile[threadIdx.x] + w1 * tile[threadIdx.x + 1] + w2 * tile[threadIdx.x + 2];
    }
}

cudaError_t stencil3(const float* in, float* out, int n, float w0, float w1, float w2)
{
    stencil_kernel<<<(n + TILE - 1) / TILE, TILE>>>(in, out, n, w0, w1, w2);
    return cudaGetLastError();
}
