// flags: --arch-map 80=210,90=mp_22
// CHECK: #if __MUSA_ARCH__ >= 210
// DIAG: MU2001:note
#if __CUDA_ARCH__ >= 800
#endif
// CHECK: #if __MUSA_ARCH__ >= 220
// DIAG: MU2001:warning
#if __CUDA_ARCH__ >= 1000
#endif
