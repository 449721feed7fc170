// Tries to write a file outside its working directory (argv[1] names it).
#include <cstdio>
#include <cuda_runtime.h>
int main(int argc, char** argv) {
  std::FILE* f = std::fopen(argc > 1 ? argv[1] : "/tmp/musify-escape-test.txt", "w");
  if (!f) { std::perror("fopen"); return 1; }
  std::fputs("escaped\n", f);
  std::fclose(f);
  std::puts("wrote it");
  return 0;
}
