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
