// kernels.cu -- the fused_ops kernels. The row sum reduces with warp shuffles written against
// warpSize, so it is right for 32- and 128-lane warps alike.
#include "kernels.cuh"

__global__ void scale_add_kernel(const float* __restrict__ x, float* __restrict__ y, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = fmaf(a, x[i], b);
    }
}

__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ out, int cols)
{
    extern __shared__ float partial[];  // one slot per warp
    const float* row = x + static_cast<size_t>(blockIdx.x) * cols;
    float sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        sum += row[c];
    }
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
        sum += __shfl_down_sync(__activemask(), sum, offset);
    }
    const int lane = threadIdx.x % warpSize;
    const int warp = threadIdx.x / warpSize;
    if (lane == 0) {
        partial[warp] = sum;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        const int warps = (blockDim.x + warpSize - 1) / warpSize;
        for (int w = 0; w < warps; ++w) {
            total += partial[w];
        }
        out[blockIdx.x] = total;
    }
}

cudaError_t launch_scale_add(const float* x, float* y, float a, float b, int n, cudaStream_t stream)
{
    const int threads = 256;
    const int blocks = (n + threads - 1) / threads;
    scale_add_kernel<<<blocks, threads, 0, stream>>>(x, y, a, b, n);
    return cudaGetLastError();
}

cudaError_t launch_row_sum(const float* x, float* out, int rows, int cols, cudaStream_t stream)
{
    int warp = 32;
    cudaDeviceGetAttribute(&warp, cudaDevAttrWarpSize, 0);
    const int threads = 256;
    const size_t smem = ((threads + warp - 1) / warp) * sizeof(float);
    row_sum_kernel<<<rows, threads, smem, stream>>>(x, out, cols);
    return cudaGetLastError();
}
