// Comments and string literals are never rewritten by default.
#include <cstdio>
void f(float* p) {
  // CHECK:   musaFree(p);  // cudaFree releases p
  cudaFree(p);  // cudaFree releases p
  // CHECK:   printf("cudaMalloc failed: %s\n", "cudaErrorMemoryAllocation");
  printf("cudaMalloc failed: %s\n", "cudaErrorMemoryAllocation");
  // CHECK:   /* cudaMemcpy */ musaMemset(p, 0, 4); /* cudaMemset */
  /* cudaMemcpy */ cudaMemset(p, 0, 4); /* cudaMemset */
  // CHECK:   const char* raw = R"x(cudaDeviceSynchronize())x"; musaDeviceSynchronize();
  const char* raw = R"x(cudaDeviceSynchronize())x"; cudaDeviceSynchronize();
  // CHECK:   char c = 'c'; int big = 1'000'000; musaDeviceSynchronize();
  char c = 'c'; int big = 1'000'000; cudaDeviceSynchronize();
}
