// Every thread but the first runs on a fiber stack after the barrier, and recurses far deeper
// than EMU_STACK_SIZE: the emulator must say that a GPU thread overflowed its stack.
#include <cstdio>
__device__ int deep(int n) {
    volatile char pad[1024];
    pad[0] = static_cast<char>(n);
    return n == 0 ? pad[0] : deep(n - 1) + pad[0];
}
__global__ void recurse(int* out, int depth) {
    __syncthreads();
    out[threadIdx.x] = deep(depth);
}
int main() {
    int* d;
    cudaMalloc(&d, 64 * sizeof(int));
    recurse<<<1, 64>>>(d, 4096);
    cudaDeviceSynchronize();
    std::printf("PASS\n");
    return 0;
}
