// Never ends (a host loop the compiler cannot remove).
#include <cstdio>
#include <cuda_runtime.h>
int main() {
  volatile unsigned long spins = 0;
  for (;;) spins = spins + 1;
  std::printf("unreachable %lu\n", (unsigned long)spins);
  return 0;
}
