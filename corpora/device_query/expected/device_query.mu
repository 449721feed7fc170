// device_query: enumerate devices, print what the first one reports and check that the values
// are plausible; a kernel reads warpSize on the device and it must agree with the properties.
#include <cstdio>
#include <cstring>

#include "cuda_check.muh"

__global__ void read_warp_size(int* out)
{
    if (threadIdx.x == 0) {
        *out = warpSize;
    }
}

static bool plausible(const musaDeviceProp& prop)
{
    const bool warp_ok = prop.warpSize == 32 || prop.warpSize == 64 || prop.warpSize == 128;
    bool ok = warp_ok && std::strlen(prop.name) > 0 && prop.multiProcessorCount >= 1 &&
              prop.maxThreadsPerBlock >= prop.warpSize && prop.maxThreadsPerBlock <= 4096 &&
              prop.totalGlobalMem > 0 && prop.sharedMemPerBlock >= 16 * 1024 && prop.maxGridSize[0] >= 65535;
#if defined(MUSART_VERSION) && MUSART_VERSION >= 11000
    // maxBlocksPerMultiProcessor first appeared in CUDA 11.0.
    ok = ok && prop.maxBlocksPerMultiProcessor >= 1;
#else
    ok = ok && prop.maxThreadsPerMultiProcessor >= prop.maxThreadsPerBlock;
#endif
    return ok;
}

int main()
{
    int count = 0;
    CUDA_CHECK(musaGetDeviceCount(&count));
    if (count < 1) {
        std::printf("FAIL device_query no CUDA device found\n");
        return 1;
    }
    CUDA_CHECK(musaSetDevice(0));
    int current = -1;
    CUDA_CHECK(musaGetDevice(&current));
    musaDeviceProp prop;
    CUDA_CHECK(musaGetDeviceProperties(&prop, current));
    int attr_warp = 0;
    CUDA_CHECK(musaDeviceGetAttribute(&attr_warp, musaDevAttrWarpSize, current));
    std::printf("info: devices=%d name=\"%s\" warpSize=%d SMs=%d cc=%d.%d\n", count, prop.name, prop.warpSize,
                prop.multiProcessorCount, prop.major, prop.minor);

    int* d_warp = nullptr;
    int kernel_warp = 0;
    CUDA_CHECK(musaMalloc(&d_warp, sizeof(int)));
    read_warp_size<<<1, 32>>>(d_warp);
    CUDA_CHECK_KERNEL();
    CUDA_CHECK(musaMemcpy(&kernel_warp, d_warp, sizeof(int), musaMemcpyDeviceToHost));
    CUDA_CHECK(musaFree(d_warp));

    const bool ok = current == 0 && plausible(prop) && attr_warp == prop.warpSize && kernel_warp == prop.warpSize;
    std::printf("%s device_query devices=%d warpSize=%d kernel_warpSize=%d\n", ok ? "PASS" : "FAIL", count,
                prop.warpSize, kernel_warp);
    return ok ? 0 : 1;
}
