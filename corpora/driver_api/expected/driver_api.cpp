// driver_api: the CUDA driver API from plain host C++ (no kernels): initialise, enumerate
// devices, read attributes, make the primary context current, and round-trip a buffer through
// device memory with cuMemAlloc / cuMemcpyHtoD / cuMemcpyDtoH / cuMemFree. Links with -lcuda.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <musa.h>

#define CU_CHECK(call)                                                                       \
    do {                                                                                     \
        const MUresult res = (call);                                                         \
        if (res != MUSA_SUCCESS) {                                                           \
            const char* name = nullptr;                                                      \
            muGetErrorName(res, &name);                                                      \
            std::printf("FAIL driver_api: %s returned %d (%s)\n", #call, static_cast<int>(res), \
                        name ? name : "unknown");                                            \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

int main()
{
    CU_CHECK(muInit(0));
    int count = 0;
    CU_CHECK(muDeviceGetCount(&count));
    if (count < 1) {
        std::printf("FAIL driver_api no device\n");
        return 1;
    }
    MUdevice dev;
    CU_CHECK(muDeviceGet(&dev, 0));
    char name[256] = {};
    CU_CHECK(muDeviceGetName(name, sizeof(name), dev));
    int warp = 0, sms = 0, max_threads = 0;
    CU_CHECK(muDeviceGetAttribute(&warp, MU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
    CU_CHECK(muDeviceGetAttribute(&sms, MU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CU_CHECK(muDeviceGetAttribute(&max_threads, MU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev));
    bool ok = std::strlen(name) > 0 && (warp == 32 || warp == 64 || warp == 128) && sms >= 1 &&
              max_threads >= warp;
#if MUSA_COMP_VERSION >= 11000
    // CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR is new in CUDA 11.0.
    int max_blocks = 0;
    CU_CHECK(muDeviceGetAttribute(&max_blocks, MU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, dev));
    ok = ok && max_blocks >= 1;
#else
    int max_threads_sm = 0;
    CU_CHECK(muDeviceGetAttribute(&max_threads_sm, MU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, dev));
    ok = ok && max_threads_sm >= max_threads;
#endif
    std::printf("info: devices=%d name=\"%s\" warp=%d SMs=%d\n", count, name, warp, sms);

    MUcontext ctx;
    CU_CHECK(muDevicePrimaryCtxRetain(&ctx, dev));
    CU_CHECK(muCtxSetCurrent(ctx));

    const size_t n = 10000;
    std::vector<int> host(n), back(n, -1);
    for (size_t i = 0; i < n; ++i) host[i] = static_cast<int>(i * i % 9973);
    MUdeviceptr d_a = 0, d_b = 0;
    CU_CHECK(muMemAlloc(&d_a, n * sizeof(int)));
    CU_CHECK(muMemAlloc(&d_b, n * sizeof(int)));
    CU_CHECK(muMemcpyHtoD(d_a, host.data(), n * sizeof(int)));
    CU_CHECK(muMemcpyDtoD(d_b, d_a, n * sizeof(int)));
    CU_CHECK(muMemcpyDtoH(back.data(), d_b, n * sizeof(int)));
    CU_CHECK(muMemFree(d_a));
    CU_CHECK(muMemFree(d_b));
    CU_CHECK(muCtxSetCurrent(nullptr));
    CU_CHECK(muDevicePrimaryCtxRelease(dev));

    int bad = 0;
    for (size_t i = 0; i < n; ++i) bad += back[i] != host[i] ? 1 : 0;
    ok = ok && bad == 0;
    std::printf("%s driver_api devices=%d warp=%d mismatches=%d\n", ok ? "PASS" : "FAIL", count, warp, bad);
    return ok ? 0 : 1;
}
