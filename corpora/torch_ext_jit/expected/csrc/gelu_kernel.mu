// gelu_kernel.cu -- y = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), vectorised by float4
// where the pointers allow it.
#include "gelu_kernel.muh"

__device__ __forceinline__ float gelu(float x)
{
    const float k = 0.7978845608f;  // sqrt(2 / pi)
    return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
}

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int vec = n / 4;
    if (i < vec) {
        float4 v = reinterpret_cast<const float4*>(x)[i];
        v.x = gelu(v.x);
        v.y = gelu(v.y);
        v.z = gelu(v.z);
        v.w = gelu(v.w);
        reinterpret_cast<float4*>(y)[i] = v;
    }
    const int tail = vec * 4 + i;
    if (tail < n && i < n - vec * 4) {
        y[tail] = gelu(x[tail]);
    }
}

musaError_t launch_gelu(const float* x, float* y, int n, musaStream_t stream)
{
    const int threads = 128;
    const int work = n / 4 > n % 4 ? n / 4 : n % 4;
    gelu_kernel<<<(work + threads - 1) / threads, threads, 0, stream>>>(x, y, n);
    return musaGetLastError();
}
