// flags: --arch mp_31
// On mp_31 warps are 32 lanes: the same findings are notes.
__global__ void k(float* out) {
  // DIAG: MU2021:note
  int lane = threadIdx.x & 31;
  // DIAG: MU2020:note
  out[lane] = __shfl_sync(0xffffffff, out[lane], 0);
}
