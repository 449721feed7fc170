// flags: --rewrite-comments --rewrite-strings
void f(float* p) {
  // CHECK:   musaFree(p);  // musaFree releases p
  cudaFree(p);  // cudaFree releases p
  // CHECK:   puts("musaMalloc failed");
  puts("cudaMalloc failed");
}
