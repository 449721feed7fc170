// stencil.cuh -- out[i] = w0*in[i-1] + w1*in[i] + w2*in[i+1], zero outside the array.
#pragma once
#include <cuda_runtime.h>

cudaError_t stencil3(const float* in, float* out, int n, float w0, float w1, float w2);
