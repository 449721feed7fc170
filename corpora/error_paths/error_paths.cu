// error_paths: provoke errors on purpose and check how the runtime reports them.
//  * a launch with more threads per block than any device allows fails with
//    cudaErrorInvalidConfiguration; cudaPeekAtLastError reports it without clearing it,
//    cudaGetLastError reports it and clears it; the error is not sticky, so a good launch works;
//  * freeing a pointer that did not come from cudaMalloc returns an error;
//  * an impossible allocation returns cudaErrorMemoryAllocation;
//  * cudaGetErrorString gives a message for every code.
// The program defines its own checks and exits 0 when the runtime behaves as documented.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

static int failures = 0;

// Not an abort-on-error macro: here errors are expected, so a mismatch is only counted.
#define EXPECT(cond)                                                    \
    do {                                                                \
        if (!(cond)) {                                                  \
            std::printf("error_paths: expectation failed: %s (line %d)\n", #cond, __LINE__); \
            ++failures;                                                 \
        }                                                               \
    } while (0)

__global__ void touch(int* p)
{
    p[threadIdx.x] = static_cast<int>(threadIdx.x);
}

int main()
{
    int* d = nullptr;
    EXPECT(cudaMalloc(&d, 64 * sizeof(int)) == cudaSuccess);
    EXPECT(cudaGetLastError() == cudaSuccess);

    touch<<<1, 4096>>>(d);  // 4096 threads per block: an invalid configuration everywhere
    const cudaError_t peek1 = cudaPeekAtLastError();
    const cudaError_t peek2 = cudaPeekAtLastError();
    const cudaError_t get1 = cudaGetLastError();
    const cudaError_t get2 = cudaGetLastError();
    EXPECT(peek1 == cudaErrorInvalidConfiguration);
    EXPECT(peek2 == peek1);  // peeking does not clear
    EXPECT(get1 == peek1);
    EXPECT(get2 == cudaSuccess);  // getting does

    // Not sticky: the context still works.
    touch<<<1, 64>>>(d);
    EXPECT(cudaGetLastError() == cudaSuccess);
    EXPECT(cudaDeviceSynchronize() == cudaSuccess);
    int host[64] = {};
    EXPECT(cudaMemcpy(host, d, sizeof(host), cudaMemcpyDeviceToHost) == cudaSuccess);
    EXPECT(host[63] == 63);

    int on_stack = 0;
    const cudaError_t free_err = cudaFree(&on_stack);  // "cudaFree of a host pointer" must fail
    EXPECT(free_err != cudaSuccess);
    cudaGetLastError();  // clear whatever the failed call recorded
    EXPECT(cudaGetLastError() == cudaSuccess);

    void* huge = nullptr;
    const cudaError_t alloc_err = cudaMalloc(&huge, static_cast<size_t>(1) << 62);
    EXPECT(alloc_err == cudaErrorMemoryAllocation);
    cudaGetLastError();

    const char* msg_config = cudaGetErrorString(cudaErrorInvalidConfiguration);
    const char* msg_ok = cudaGetErrorString(cudaSuccess);
    EXPECT(msg_config != nullptr && std::strlen(msg_config) > 0);
    EXPECT(msg_ok != nullptr && std::strlen(msg_ok) > 0);
    EXPECT(msg_config != nullptr && msg_ok != nullptr && std::strcmp(msg_config, msg_ok) != 0);

    EXPECT(cudaFree(d) == cudaSuccess);
    std::printf("%s error_paths failed_expectations=%d\n", failures == 0 ? "PASS" : "FAIL", failures);
    return failures == 0 ? 0 : 1;
}
