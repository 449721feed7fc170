// kernel_printf: the first thread of each block prints a line from device code while the kernel
// also computes squares. The program checks the squares, never the printed text, so its PASS
// does not depend on how (or whether) a platform forwards device printf to stdout.
#include <cstdio>
#include <vector>

#include "cuda_check.muh"

__global__ void squares_and_greetings(const int* in, int* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * in[i];
    }
    if (threadIdx.x == 0) {
        printf("kernel: block %d of %d says hello, first input %d\n", blockIdx.x, gridDim.x, i < n ? in[i] : -1);
    }
}

int main()
{
    const int n = 1000, threads = 256;
    const int blocks = (n + threads - 1) / threads;
    std::vector<int> in(n), out(n);
    for (int i = 0; i < n; ++i) in[i] = i - 500;
    int *d_in, *d_out;
    CUDA_CHECK(musaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(musaMalloc(&d_out, n * sizeof(int)));
    CUDA_CHECK(musaMemcpy(d_in, in.data(), n * sizeof(int), musaMemcpyHostToDevice));
    squares_and_greetings<<<blocks, threads>>>(d_in, d_out, n);
    CUDA_CHECK_KERNEL();  // synchronising also flushes the device printf buffer
    CUDA_CHECK(musaMemcpy(out.data(), d_out, n * sizeof(int), musaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += out[i] != in[i] * in[i] ? 1 : 0;
    CUDA_CHECK(musaFree(d_in));
    CUDA_CHECK(musaFree(d_out));
    std::printf("%s kernel_printf blocks=%d mismatches=%d\n", bad == 0 ? "PASS" : "FAIL", blocks, bad);
    return bad == 0 ? 0 : 1;
}
