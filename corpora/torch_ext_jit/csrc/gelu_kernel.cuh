// gelu_kernel.cuh -- tanh-approximated GELU, forward, on float arrays.
#pragma once
#include <cuda_runtime.h>

cudaError_t launch_gelu(const float* x, float* y, int n, cudaStream_t stream);
