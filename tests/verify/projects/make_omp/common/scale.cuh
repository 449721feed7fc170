// Shared by the programs of this project; the Makefile puts this folder on the include path.
#pragma once
#include <cstdio>
#include <cstdlib>

#ifndef SCALE
#error "build with -DSCALE=<factor> (the Makefile does)"
#endif

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cudaError_t err_ = (call);                                                           \
    if (err_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                                      \
    }                                                                                    \
  } while (0)

__host__ __device__ inline float scaled(float v) { return v * SCALE + 1.0f; }
