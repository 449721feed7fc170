// The last thread writes one element past the end of a device allocation (after a barrier, so the
// write happens on a fiber stack): an AddressSanitizer build must report it.
#include <cstdio>
__global__ void shift_left(int* out) {
    __shared__ int tile[64];
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x + 1] = tile[63 - threadIdx.x];  // thread 63 writes out[64]
}
int main() {
    int* d;
    cudaMalloc(&d, 64 * sizeof(int));
    shift_left<<<1, 64>>>(d);
    cudaDeviceSynchronize();
    std::printf("PASS\n");
    return 0;
}
