// saxpy.cuh -- y = a*x + y and a dot product, as host functions over device pointers.
#pragma once
#include <cuda_runtime.h>

cudaError_t saxpy(int n, float a, const float* x, float* y);
cudaError_t dot(int n, const float* x, const float* y, float* result);
