// saxpy.cu -- the library: a grid-stride saxpy and a two-stage dot product (shared-memory tree
// per block, then atomics across blocks).
#include "saxpy.muh"

__global__ void saxpy_kernel(int n, float a, const float* x, float* y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        y[i] = a * x[i] + y[i];
    }
}

__global__ void dot_kernel(int n, const float* x, const float* y, float* result)
{
    __shared__ float cache[256];
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        sum += x[i] * y[i];
    }
    cache[threadIdx.x] = sum;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) {
            cache[threadIdx.x] += cache[threadIdx.x + stride];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        atomicAdd(result, cache[0]);
    }
}

musaError_t saxpy(int n, float a, const float* x, float* y)
{
    saxpy_kernel<<<64, 256>>>(n, a, x, y);
    return musaGetLastError();
}

musaError_t dot(int n, const float* x, const float* y, float* result)
{
    musaError_t err = musaMemset(result, 0, sizeof(float));
    if (err != musaSuccess) return err;
    dot_kernel<<<32, 256>>>(n, x, y, result);
    return musaGetLastError();
}
