// emu-run passes the arguments after `--` to the program and exits with the program's status.
#include <cstdio>
__global__ void width(int* out) { *out = warpSize; }
int main(int argc, char** argv) {
    int* w;
    musaMallocManaged(&w, sizeof(int));
    width<<<1, 1>>>(w);
    musaDeviceSynchronize();
    std::printf("warp %d args", *w);
    for (int i = 1; i < argc; ++i) std::printf(" %s", argv[i]);
    std::printf("\n");
    return 7;
}
