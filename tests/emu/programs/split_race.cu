// A kernel the region split accepts, with a shared-memory race after its barrier: under
// --racecheck (which keeps the fibers) the race must still be reported.
#include <cstdio>

__global__ void neighbour(int* out) {
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % 64];
    s[threadIdx.x] = 0;  // the neighbour reads this slot after the barrier too: a race
}

int main() {
    int* out;
    cudaMallocManaged(&out, 64 * 4);
    neighbour<<<1, 64>>>(out);
    cudaDeviceSynchronize();
    std::printf("no race reported\n");
    return 0;
}
