// stats_api.h -- the interface between the host-only main.cpp (built by the host compiler) and
// kernels.cu (built by nvcc). Plain C types only, so either compiler can read it.
#pragma once

#include <stddef.h>

#ifdef __MUSACC__
#define STATS_HD __host__ __device__
#else
#define STATS_HD
#endif

// The per-element transform, shared by the kernel and by the CPU reference.
STATS_HD inline int stats_transform(int v) { return 3 * v - 7; }

#ifdef __cplusplus
extern "C" {
#endif
// Applies stats_transform to every element on the device; returns 0 or a cudaError_t value.
int stats_transform_on_device(const int* host_in, int* host_out, size_t n);
#ifdef __cplusplus
}
#endif

// A C++ (mangled) entry point: the sum of the transformed values, computed on the device.
long long stats_sum_on_device(const int* host_in, size_t n);
