// Inline assembly: an error, and the code is kept exactly as written.
__device__ unsigned lane_id() {
  unsigned r;
  // CHECK:   asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  // DIAG: MU2040
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  // DIAG: MU2040
  __asm__("membar.gl;");
  // DIAG: MU2040, MU2035
  asm("wgmma.fence.sync.aligned;");
  return r;
}
// Negatives: the word in a comment (asm("x")) or a string, and a name that contains it.
const char* s = "asm volatile(\"nop\")";
int plasma(int x) { return x; }
int wasm(int x) { return plasma(x); }
// Host assembly is the host compiler's (x86, Arm64, POWER): no error, since it is not PTX.
unsigned long long host_ticks() {
  unsigned lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  return ((unsigned long long)hi << 32) | lo;
}
unsigned long long arm_ticks() {
  unsigned long long val;
  __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(val));
  asm volatile("" : "+r"(val));
  return val;
}
// PTX outside any function the analysis sees as device code (a project macro qualifies it):
// the template alone keeps the error.
#define DEVICE_INLINE __device__ inline
DEVICE_INLINE unsigned warp_id() {
  unsigned w;
  // DIAG: MU2040
  asm("mov.u32 %0, %%warpid;" : "=r"(w));
  return w;
}
// A macro body's assembly: where it is expanded is not known, so it keeps its error.
// DIAG: MU2040
#define SHUFFLE_MACRO(name) { asm volatile ("{" STRINGIFY(name) " %0,%1;\n}" : "=r"(r) : "r"(v)); }
// PTX known by its opcode and packed type, in a function qualified through a macro.
#define DEVICE_HOST_STATIC static __host__ __device__
DEVICE_HOST_STATIC unsigned vimax(unsigned a, unsigned b) {
  unsigned res;
  // DIAG: MU2040
  asm("{max.s16x2.relu %0, %1, %2;}" : "=r"(res) : "r"(a), "r"(b));
  return res;
}
// Device assembly without PTX in it is still reported: MUSA's support for it is not known.
__device__ void barrier_only() {
  // DIAG: MU2040
  asm volatile("" ::: "memory");
}
