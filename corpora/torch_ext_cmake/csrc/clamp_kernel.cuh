// clamp_kernel.cuh -- clamp every element into [lo, hi] and count how many were changed.
#pragma once
#include <cuda_runtime.h>

cudaError_t launch_clamp(float* data, int n, float lo, float hi, unsigned int* changed, cudaStream_t stream);
