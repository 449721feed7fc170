// Calls cuDNN, which the emulator does not implement: it compiles, and stops at the call.
#include "common.h"
int main() {
    cudnnHandle_t handle;
    std::printf("before\n");
    CHECK_CUDNN(cudnnCreate(&handle));
    std::printf("after\n");
    return 0;
}
