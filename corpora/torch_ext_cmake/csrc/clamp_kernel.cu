// clamp_kernel.cu -- the kernel and its launcher; no ATen, so the driver can run it alone.
#include "clamp_kernel.cuh"

__global__ void clamp_kernel(float* data, int n, float lo, float hi, unsigned int* changed)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = data[i];
    float c = fminf(fmaxf(v, lo), hi);
    if (c != v) {
        data[i] = c;
        atomicAdd(changed, 1u);
    }
}

cudaError_t launch_clamp(float* data, int n, float lo, float hi, unsigned int* changed, cudaStream_t stream)
{
    clamp_kernel<<<(n + 255) / 256, 256, 0, stream>>>(data, n, lo, hi, changed);
    return cudaGetLastError();
}
