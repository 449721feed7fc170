// A barrier that half of the block never reaches: the emulator reports both sites and exits non-zero.
#include <cstdio>
__global__ void split(int* out) {
    if (threadIdx.x < 16) {
        __syncthreads();
    } else {
        out[threadIdx.x] = 1;
        __syncthreads();
    }
}
int main() {
    int* d;
    cudaMalloc(&d, 64 * sizeof(int));
    split<<<1, 64>>>(d);
    cudaDeviceSynchronize();
    std::printf("PASS\n");
    return 0;
}
