// Runtime API: functions, types, enumerators and macros keep their shape and change their prefix.
#include <cstdio>
int main() {
  float* d = nullptr;
  // CHECK:   musaError_t err = musaMalloc(&d, 64 * sizeof(float));
  cudaError_t err = cudaMalloc(&d, 64 * sizeof(float));
  // CHECK:   if (err != musaSuccess) { printf("%s\n", musaGetErrorString(err)); }
  if (err != cudaSuccess) { printf("%s\n", cudaGetErrorString(err)); }
  // CHECK:   musaMemcpy(d, d, 4, musaMemcpyDeviceToDevice);
  cudaMemcpy(d, d, 4, cudaMemcpyDeviceToDevice);
  // CHECK:   musaStream_t s; musaStreamCreateWithFlags(&s, musaStreamNonBlocking);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  // CHECK:   musaEvent_t e; musaEventCreateWithFlags(&e, musaEventDisableTiming);
  cudaEvent_t e; cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  // CHECK:   musaDeviceProp prop; musaGetDeviceProperties(&prop, 0);
  cudaDeviceProp prop; cudaGetDeviceProperties(&prop, 0);
  // CHECK:   musaMallocManaged(&d, 4, musaMemAttachGlobal);
  cudaMallocManaged(&d, 4, cudaMemAttachGlobal);
  // CHECK:   musaFuncSetAttribute(nullptr, musaFuncAttributeMaxDynamicSharedMemorySize, 0);
  cudaFuncSetAttribute(nullptr, cudaFuncAttributeMaxDynamicSharedMemorySize, 0);
  // CHECK:   musaStreamDestroy(s); musaEventDestroy(e); musaFree(d); musaDeviceReset();
  cudaStreamDestroy(s); cudaEventDestroy(e); cudaFree(d); cudaDeviceReset();
  // CHECK:   dim3 grid(1, 2); float4 v = make_float4(0, 0, 0, 0);
  dim3 grid(1, 2); float4 v = make_float4(0, 0, 0, 0);
  return 0;
}
