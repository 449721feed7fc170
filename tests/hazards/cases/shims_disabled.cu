// flags: --no-shims
__global__ void k(__half* h) {
  // CHECK: h[0] = hexp(h[0]);
  // DIAG: MU2061
  h[0] = hexp(h[0]);
}
