// fp16 names keep their names; bf16 and fp8 are renamed (MUSA_FACTS 1).
#include <cuda_fp16.h>
__global__ void k(__half* h, __nv_bfloat16* b) {
  // CHECK:   __half x = __float2half(1.0f); half2 y = __floats2half2_rn(1.0f, 2.0f);
  __half x = __float2half(1.0f); half2 y = __floats2half2_rn(1.0f, 2.0f);
  // CHECK:   __mt_bfloat16 z = __float2bfloat16(2.0f); __mt_bfloat162 w;
  __nv_bfloat16 z = __float2bfloat16(2.0f); __nv_bfloat162 w;
  // CHECK:   int i = threadIdx.x + blockIdx.x * blockDim.x; __syncthreads();
  int i = threadIdx.x + blockIdx.x * blockDim.x; __syncthreads();
  // CHECK:   float v = __shfl_down_sync(__activemask(), 1.0f, 1); atomicAdd(&h[0], x);
  float v = __shfl_down_sync(__activemask(), 1.0f, 1); atomicAdd(&h[0], x);
}
