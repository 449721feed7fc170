// Self-referential defines: a compatibility header that already maps CUDA to MUSA.
// CHECK: #define cudaEventDisableTiming musaEventDisableTiming
// DIAG: MU2050
#define cudaEventDisableTiming musaEventDisableTiming
// CHECK: #define cudaMalloc \
// DIAG: MU2050
#define cudaMalloc \
    musaMalloc  /* continued */
// Negatives: ordinary defines are renamed as usual.
// CHECK: #define MY_ALLOC musaMalloc
#define MY_ALLOC cudaMalloc
// CHECK: #define musaFree(p) musaFree(p)
#define cudaFree(p) cudaFree(p)
