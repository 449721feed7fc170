// Libraries by their prefixes; CUB and Thrust keep their names except thrust::cuda.
#include <cublas_v2.h>
void f(cublasHandle_t* h, float* a) {
  // CHECK:   mublasCreate(h); mublasSgemm(*h, MUBLAS_OP_N, MUBLAS_OP_T, 1, 1, 1, a, a, 1, a, 1, a, a, 1);
  cublasCreate(h); cublasSgemm(*h, CUBLAS_OP_N, CUBLAS_OP_T, 1, 1, 1, a, a, 1, a, 1, a, a, 1);
  // CHECK:   murandGenerator_t g; murandCreateGenerator(&g, MURAND_RNG_PSEUDO_DEFAULT);
  curandGenerator_t g; curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);
  // CHECK:   mufftHandle plan; mufftPlan1d(&plan, 8, MUFFT_C2C, 1);
  cufftHandle plan; cufftPlan1d(&plan, 8, CUFFT_C2C, 1);
  // CHECK:   thrust::sort(thrust::musa::par, a, a + 1); cub::DeviceReduce::Sum(nullptr, n, a, a, 1);
  thrust::sort(thrust::cuda::par, a, a + 1); cub::DeviceReduce::Sum(nullptr, n, a, a, 1);
  // CHECK:   mcclComm_t comm; mcclAllReduce(a, a, 1, mcclFloat, mcclSum, comm, 0);
  ncclComm_t comm; ncclAllReduce(a, a, 1, ncclFloat, ncclSum, comm, 0);
}
