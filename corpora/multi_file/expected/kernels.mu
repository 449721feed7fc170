// kernels.cu -- the device half of multi_file: kernels and the functions declared in
// stats_api.h that launch them.
#include "block_reduce.muh"
#include "cuda_check.muh"
#include "stats_api.h"

namespace {

constexpr int kThreads = 256;  // a power of two, as block_reduce_sum requires

__global__ void transform_kernel(const int* in, int* out, size_t n)
{
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = stats_transform(in[i]);
}

__global__ void sum_kernel(const int* in, size_t n, unsigned long long* total)
{
    __shared__ long long scratch[kThreads];
    long long acc = 0;
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        acc += stats_transform(in[i]);
    }
    const long long block_total = block_reduce_sum(acc, scratch);
    if (threadIdx.x == 0) atomicAdd(total, static_cast<unsigned long long>(block_total));  // two's complement
}

}  // namespace

extern "C" int stats_transform_on_device(const int* host_in, int* host_out, size_t n)
{
    int *d_in = nullptr, *d_out = nullptr;
    musaError_t err = musaMalloc(&d_in, n * sizeof(int));
    if (err == musaSuccess) err = musaMalloc(&d_out, n * sizeof(int));
    if (err == musaSuccess) err = musaMemcpy(d_in, host_in, n * sizeof(int), musaMemcpyHostToDevice);
    if (err == musaSuccess) {
        transform_kernel<<<static_cast<unsigned int>((n + kThreads - 1) / kThreads), kThreads>>>(d_in, d_out, n);
        err = musaGetLastError();
    }
    if (err == musaSuccess) err = musaMemcpy(host_out, d_out, n * sizeof(int), musaMemcpyDeviceToHost);
    musaFree(d_in);
    musaFree(d_out);
    return static_cast<int>(err);
}

long long stats_sum_on_device(const int* host_in, size_t n)
{
    int* d_in = nullptr;
    unsigned long long* d_total = nullptr;
    CUDA_CHECK(musaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_total, sizeof(unsigned long long)));
    CUDA_CHECK(musaMemcpy(d_in, host_in, n * sizeof(int), musaMemcpyHostToDevice));
    CUDA_CHECK(musaMemset(d_total, 0, sizeof(unsigned long long)));
    sum_kernel<<<16, kThreads>>>(d_in, n, d_total);
    CUDA_CHECK_KERNEL();
    unsigned long long total = 0;
    CUDA_CHECK(musaMemcpy(&total, d_total, sizeof(total), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaFree(d_in));
    CUDA_CHECK(musaFree(d_total));
    return static_cast<long long>(total);
}
