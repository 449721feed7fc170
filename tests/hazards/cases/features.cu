// Features MUSA lacks: one diagnostic per use.
// DIAG: MU2030
#include <cudnn.h>
// DIAG: MU2031
texture<float, 1, cudaReadModeElementType> tex_ref;

__global__ void child(float* x) { x[threadIdx.x] = 0.0f; }

__global__ void parent(float* x) {
  // DIAG: MU2032
  child<<<1, 32>>>(x);
  // DIAG: MU2032
  cudaDeviceSynchronize();
  // DIAG: MU2033
  cudaGridDependencySynchronize();
}

// DIAG: MU2036
__global__ void __cluster_dims__(2, 1, 1) clustered(float* x) {}

void host(float* x) {
  // DIAG: MU2030
  cudnnHandle_t handle;
  // DIAG: MU2030
  cudnnCreate(&handle);
  // Negative: a launch and a device sync in host code are fine.
  child<<<1, 32>>>(x);
  cudaDeviceSynchronize();
  // DIAG: MU2034
  cuTensorMapEncodeTiled(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  // CHECK: int attr = musaLaunchAttributeClusterDimension;
  // DIAG: MU2036
  int attr = cudaLaunchAttributeClusterDimension;
}
