// Includes: CUDA headers by the rules, delimiters kept; other people's .cuh untouched.
// CHECK: #include <musa_runtime.h>
#include <cuda_runtime.h>
// CHECK: #include "musa_runtime_api.h"
#include "cuda_runtime_api.h"
// CHECK: #include <musa_fp16.h>
#include <cuda_fp16.h>
// CHECK: #include <musa_bf16.h>
#include <cuda_bf16.h>
// CHECK: #include <mublas.h>
#include <cublas_v2.h>
// CHECK: #include <murand_kernel.h>
#include <curand_kernel.h>
// CHECK: #include <cub/cub.cuh>
#include <cub/cub.cuh>
// CHECK: #include <thrust/device_vector.h>
#include <thrust/device_vector.h>
// CHECK: #include <vector>
#include <vector>
// CHECK:   #  include   <musa.h>   // spacing kept
  #  include   <cuda.h>   // spacing kept
