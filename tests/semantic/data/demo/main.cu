#include <cuda_runtime.h>
#include "alloc.h"

#define SYNC_ALL() cudaDeviceSynchronize()

__global__ void fill(float* x) { x[threadIdx.x] = 1.0f; }

int main() {
    float* d = nullptr;
    PoolAllocator pool;
    cudaMalloc(reinterpret_cast<void**>(&d), 64);
    pool.cudaMalloc(reinterpret_cast<void**>(&d), 64);
    fill<<<1, 16>>>(d);
    SYNC_ALL();
    cudaFree(d);
    return 0;
}
