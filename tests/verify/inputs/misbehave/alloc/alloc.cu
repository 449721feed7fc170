// Allocates host memory without bound until an allocation fails.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
int main() {
  size_t total = 0;
  for (;;) {
    char* p = static_cast<char*>(std::malloc(64u << 20));
    if (!p) { std::fprintf(stderr, "out of memory after %zu MiB\n", total >> 20); return 1; }
    std::memset(p, 1, 64u << 20);
    total += 64u << 20;
  }
}
