// CHECK: #pragma once
#pragma once
#include <cuda_fp16.h>
__global__ void k(__half* h, __half2* h2, int* r) {
  // CHECK: h[0] = musify_hexp(h[0]);
  // DIAG: MU2060
  h[0] = hexp(h[0]);
  // CHECK: h2[0] = musify_h2exp(h2[0]) ;
  // DIAG: MU2060
  h2[0] = h2exp(h2[0]) ;
  // CHECK: h[1] = musify_hexp(h[1]);
  h[1] = hexp(h[1]);
  // CHECK: r[0] = musify_reduce_add_sync(__activemask(), r[0]);
  // DIAG: MU2060
  r[0] = __reduce_add_sync(__activemask(), r[0]);
}
