// Driver API: cu* -> mu*, CU* -> MU*, CUDA_SUCCESS -> MUSA_SUCCESS.
#include <cuda.h>
void f() {
  // CHECK:   MUdevice dev; MUcontext ctx; MUdeviceptr p;
  CUdevice dev; CUcontext ctx; CUdeviceptr p;
  // CHECK:   if (muInit(0) != MUSA_SUCCESS) return;
  if (cuInit(0) != CUDA_SUCCESS) return;
  // CHECK:   muDeviceGet(&dev, 0); muDevicePrimaryCtxRetain(&ctx, dev); muCtxSetCurrent(ctx);
  cuDeviceGet(&dev, 0); cuDevicePrimaryCtxRetain(&ctx, dev); cuCtxSetCurrent(ctx);
  // CHECK:   int w; muDeviceGetAttribute(&w, MU_DEVICE_ATTRIBUTE_WARP_SIZE, dev);
  int w; cuDeviceGetAttribute(&w, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev);
  // CHECK:   muMemAlloc(&p, 16); muMemFree(p);
  cuMemAlloc(&p, 16); cuMemFree(p);
}
