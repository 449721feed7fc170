// Macro bodies, conditions and inactive branches are migrated; a project's own macro is not renamed.
// CHECK: #define CUDA_CHECK(call) do { musaError_t e_ = (call); if (e_ != musaSuccess) abort(); } while (0)
#define CUDA_CHECK(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) abort(); } while (0)
// CHECK: #define SYNC() \
#define SYNC() \
// CHECK:   musaDeviceSynchronize()
  cudaDeviceSynchronize()
// CHECK: #ifdef __MUSACC__
#ifdef __CUDACC__
#endif
// CHECK: #if defined(__MUSACC__) && !defined(__MUSA_ARCH__)
#if defined(__CUDACC__) && !defined(__CUDA_ARCH__)
#endif
#if 0
// CHECK: musaFree(nullptr);
cudaFree(nullptr);
#endif
void g() {
  // CHECK:   CUDA_CHECK(musaDeviceSynchronize());
  CUDA_CHECK(cudaDeviceSynchronize());
}
