// kernels.cuh -- the plain CUDA interface of the fused_ops kernels: no ATen here, so the C++
// driver (driver/driver.cu) and the ATen binding (fused_ops.cu) share the same launchers.
#pragma once
#include <cuda_runtime.h>

// y[i] = a * x[i] + b, one thread per element
cudaError_t launch_scale_add(const float* x, float* y, float a, float b, int n, cudaStream_t stream);

// out[r] = sum of row r of a rows x cols matrix, one block per row
cudaError_t launch_row_sum(const float* x, float* out, int rows, int cols, cudaStream_t stream);
