// launch_macros: the same kind of kernel started four ways -- through a variadic LAUNCH macro,
// from a function inside a namespace, as a qualified namespaced kernel (ns::kernel<<<...>>>),
// and with cudaLaunchKernel and an argument array. Each launch adds its own amount.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

#define LAUNCH(kernel, grid, block, ...) kernel<<<grid, block>>>(__VA_ARGS__)
#define LAUNCH_STREAM(kernel, grid, block, stream, ...) kernel<<<grid, block, 0, stream>>>(__VA_ARGS__)

__global__ void add_constant(int* data, int n, int amount)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += amount;
}

namespace shifts {

__global__ void add_index(int* data, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] += i;
}

// A launch written inside a namespace, of a kernel declared outside it.
void add_twice(int* data, int n, musaStream_t stream)
{
    ::add_constant<<<(n + 127) / 128, 128, 0, stream>>>(data, n, 2);
    CUDA_CHECK(musaGetLastError());
    LAUNCH_STREAM(add_constant, (n + 127) / 128, 128, stream, data, n, 2);
    CUDA_CHECK(musaGetLastError());
}

}  // namespace shifts

int main()
{
    const int n = 3000;
    std::vector<int> h(n, 0);
    int* d = nullptr;
    CUDA_CHECK(musaMalloc(&d, n * sizeof(int)));
    CUDA_CHECK(musaMemcpy(d, h.data(), n * sizeof(int), musaMemcpyHostToDevice));

    LAUNCH(add_constant, (n + 255) / 256, 256, d, n, 10);  // +10
    CUDA_CHECK(musaGetLastError());
    musaStream_t stream;
    CUDA_CHECK(musaStreamCreate(&stream));
    shifts::add_twice(d, n, stream);  // +4
    CUDA_CHECK(musaStreamSynchronize(stream));
    shifts::add_index<<<(n + 63) / 64, 64>>>(d, n);  // +i
    CUDA_CHECK(musaGetLastError());

    int amount = 100;
    int count = n;
    void* args[] = {&d, &count, &amount};
    CUDA_CHECK(musaLaunchKernel(reinterpret_cast<const void*>(add_constant), dim3((n + 255) / 256), dim3(256), args,
                                0, nullptr));  // +100
    CUDA_CHECK(musaDeviceSynchronize());
    CUDA_CHECK(musaMemcpy(h.data(), d, n * sizeof(int), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaStreamDestroy(stream));
    CUDA_CHECK(musaFree(d));

    int bad = 0;
    for (int i = 0; i < n; ++i) bad += h[i] != 114 + i ? 1 : 0;
    std::printf("%s launch_macros n=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", n, bad);
    return bad == 0 ? 0 : 1;
}
