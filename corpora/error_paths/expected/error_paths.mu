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

#include <musa_runtime.h>

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
    EXPECT(musaMalloc(&d, 64 * sizeof(int)) == musaSuccess);
    EXPECT(musaGetLastError() == musaSuccess);

    touch<<<1, 4096>>>(d);  // 4096 threads per block: an invalid configuration everywhere
    const musaError_t peek1 = musaPeekAtLastError();
    const musaError_t peek2 = musaPeekAtLastError();
    const musaError_t get1 = musaGetLastError();
    const musaError_t get2 = musaGetLastError();
    EXPECT(peek1 == musaErrorInvalidConfiguration);
    EXPECT(peek2 == peek1);  // peeking does not clear
    EXPECT(get1 == peek1);
    EXPECT(get2 == musaSuccess);  // getting does

    // Not sticky: the context still works.
    touch<<<1, 64>>>(d);
    EXPECT(musaGetLastError() == musaSuccess);
    EXPECT(musaDeviceSynchronize() == musaSuccess);
    int host[64] = {};
    EXPECT(musaMemcpy(host, d, sizeof(host), musaMemcpyDeviceToHost) == musaSuccess);
    EXPECT(host[63] == 63);

    int on_stack = 0;
    const musaError_t free_err = musaFree(&on_stack);  // "cudaFree of a host pointer" must fail
    EXPECT(free_err != musaSuccess);
    musaGetLastError();  // clear whatever the failed call recorded
    EXPECT(musaGetLastError() == musaSuccess);

    void* huge = nullptr;
    const musaError_t alloc_err = musaMalloc(&huge, static_cast<size_t>(1) << 62);
    EXPECT(alloc_err == musaErrorMemoryAllocation);
    musaGetLastError();

    const char* msg_config = musaGetErrorString(musaErrorInvalidConfiguration);
    const char* msg_ok = musaGetErrorString(musaSuccess);
    EXPECT(msg_config != nullptr && std::strlen(msg_config) > 0);
    EXPECT(msg_ok != nullptr && std::strlen(msg_ok) > 0);
    EXPECT(msg_config != nullptr && msg_ok != nullptr && std::strcmp(msg_config, msg_ok) != 0);

    EXPECT(musaFree(d) == musaSuccess);
    std::printf("%s error_paths failed_expectations=%d\n", failures == 0 ? "PASS" : "FAIL", failures);
    return failures == 0 ? 0 : 1;
}
