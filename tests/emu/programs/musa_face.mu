// The MUSA face: runtime and driver names with the musa/mu prefixes; prints PASS.
#include <musa.h>
#include <musa_runtime.h>
#include <cstdio>
#include <cstring>

__global__ void fill(int* p, int v) { p[blockIdx.x * blockDim.x + threadIdx.x] = v + __shfl_sync(0xffffffff, 0, 0); }

int main() {
    int failures = 0;
    int* d;
    if (musaMalloc(&d, 256 * sizeof(int)) != musaSuccess) ++failures;
    fill<<<2, 128>>>(d, 7);
    int h[256];
    musaMemcpy(h, d, sizeof h, musaMemcpyDeviceToHost);
    for (int i = 0; i < 256; ++i) failures += h[i] != 7;
    musaDeviceProp prop;
    musaGetDeviceProperties(&prop, 0);
    failures += prop.warpSize != warpSize;
    failures += std::strcmp(musaGetErrorName(musaErrorInvalidValue), "musaErrorInvalidValue") != 0;
#if !defined(__MUSACC__) || MUSA_VERSION != 50200 || defined(__CUDACC__)
    ++failures;
#endif
    MUdevice dev;
    MUcontext ctx;
    MUdeviceptr p;
    failures += muDeviceGet(&dev, 0) != MUSA_ERROR_NOT_INITIALIZED;
    failures += muInit(0) != MUSA_SUCCESS;
    failures += muDeviceGet(&dev, 0) != MUSA_SUCCESS;
    failures += muDevicePrimaryCtxRetain(&ctx, dev) != MUSA_SUCCESS;
    failures += muMemAlloc(&p, 64) != MUSA_ERROR_INVALID_CONTEXT;
    failures += muCtxSetCurrent(ctx) != MUSA_SUCCESS;
    failures += muMemAlloc(&p, 64) != MUSA_SUCCESS;
    int src[16] = {1, 2, 3}, dst[16] = {};
    failures += muMemcpyHtoD(p, src, sizeof src) != MUSA_SUCCESS;
    failures += muMemcpyDtoH(dst, p, sizeof dst) != MUSA_SUCCESS || dst[2] != 3;
    failures += muMemFree(p) != MUSA_SUCCESS;
    const char* s = nullptr;
    failures += muGetErrorString(MUSA_ERROR_INVALID_VALUE, &s) != MUSA_SUCCESS || !s;
    std::printf(failures ? "FAILED %d\n" : "PASS\n", failures);
    return failures != 0;
}
