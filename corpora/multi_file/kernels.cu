// kernels.cu -- the device half of multi_file: kernels and the functions declared in
// stats_api.h that launch them.
#include "block_reduce.cuh"
#include "cuda_check.cuh"
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
    cudaError_t err = cudaMalloc(&d_in, n * sizeof(int));
    if (err == cudaSuccess) err = cudaMalloc(&d_out, n * sizeof(int));
    if (err == cudaSuccess) err = cudaMemcpy(d_in, host_in, n * sizeof(int), cudaMemcpyHostToDevice);
    if (err == cudaSuccess) {
        transform_kernel<<<static_cast<unsigned int>((n + kThreads - 1) / kThreads), kThreads>>>(d_in, d_out, n);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess) err = cudaMemcpy(host_out, d_out, n * sizeof(int), cudaMemcpyDeviceToHost);
    cudaFree(d_in);
    cudaFree(d_out);
    return static_cast<int>(err);
}

long long stats_sum_on_device(const int* host_in, size_t n)
{
    int* d_in = nullptr;
    unsigned long long* d_total = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_total, sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemcpy(d_in, host_in, n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_total, 0, sizeof(unsigned long long)));
    sum_kernel<<<16, kThreads>>>(d_in, n, d_total);
    CUDA_CHECK_KERNEL();
    unsigned long long total = 0;
    CUDA_CHECK(cudaMemcpy(&total, d_total, sizeof(total), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_total));
    return static_cast<long long>(total);
}
