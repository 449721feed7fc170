// Arch guards: the name is renamed by the rules, the number by the threshold policy.
// CHECK: #ifdef __MUSA_ARCH__
#ifdef __CUDA_ARCH__
#endif
// CHECK: #if defined(__MUSA_ARCH__) && __MUSA_ARCH__ >= 220
// DIAG: MU2001:note
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#endif
// CHECK: #elif __MUSA_ARCH__ >= 310
// DIAG: MU2001:note
#elif __CUDA_ARCH__ >= 900
// CHECK: #if __MUSA_ARCH__ < 210
// DIAG: MU2001:warning
#if __CUDA_ARCH__ < 700
#endif
// CHECK: #if __MUSA_ARCH__ == 220
// DIAG: MU2001:warning
#if __CUDA_ARCH__ == 860
#endif
// CHECK: #if 220 <= __MUSA_ARCH__
// DIAG: MU2001:note
#if 800 <= __CUDA_ARCH__
#endif
// CHECK: #define HAS_BF16 (__MUSA_ARCH__ >= 220)
// DIAG: MU2001:note
#define HAS_BF16 (__CUDA_ARCH__ >= 800)
// CHECK: #if __MUSA_ARCH__ >= MIN_ARCH
// DIAG: MU2002
#if __CUDA_ARCH__ >= MIN_ARCH
#endif
// CHECK: #if __MUSA_ARCH__ / 100 == 8
// DIAG: MU2002
#if __CUDA_ARCH__ / 100 == 8
#endif
__device__ int arch_value() {
  // CHECK: if (__MUSA_ARCH__ >= 220) return 1;
  // DIAG: MU2001:note
  if (__CUDA_ARCH__ >= 800) return 1;
  // CHECK: return __MUSA_ARCH__;
  // DIAG: MU2003
  return __CUDA_ARCH__;
}
// Negative: a comment about __CUDA_ARCH__ >= 800 is untouched.
// CHECK: // needs __CUDA_ARCH__ >= 800 for bf16
// needs __CUDA_ARCH__ >= 800 for bf16
// CHECK: const char* why = "__CUDA_ARCH__ >= 800";
const char* why = "__CUDA_ARCH__ >= 800";
