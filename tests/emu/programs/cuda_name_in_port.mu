// A port that still calls a CUDA name: must not compile on the MUSA face.
#include <musa_runtime.h>
int main() {
    float* d;
    cudaMalloc(&d, 16);
    return 0;
}
