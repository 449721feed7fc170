// Version macros: renamed by the rules, every numeric comparison reported.
// CHECK: #if MUSA_COMP_VERSION >= 12080
// DIAG: MU2010
#if CUDA_VERSION >= 12080
#endif
// CHECK: #if defined(MUSART_VERSION) && MUSART_VERSION < 11000
// DIAG: MU2010
#if defined(CUDART_VERSION) && CUDART_VERSION < 11000
#endif
// DIAG: MU2010, MU2010
#if __CUDACC_VER_MAJOR__ >= 12 && __CUDACC_VER_MINOR__ >= 2
#endif
// DIAG: MU2010
#if 11020 <= __CUDA_API_VERSION
#endif
// Negatives: no comparison with a number, or inside a comment.
// CHECK: #ifdef MUSA_COMP_VERSION
#ifdef CUDA_VERSION
#endif
// CHECK: int v = MUSA_COMP_VERSION;
int v = CUDA_VERSION;
// CHECK: // CUDA_VERSION >= 12000 is needed
// CUDA_VERSION >= 12000 is needed
