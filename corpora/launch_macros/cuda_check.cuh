// cuda_check.cuh -- this program's error checking, included with quotes by its sources.
// Every CUDA runtime call goes through CUDA_CHECK, so a failure becomes the program's single
// FAIL line and a non-zero exit status instead of a wrong answer later on.
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

// A plain function (not only a macro) so that it shows up in stack traces and can be called
// with an error value the program computed itself.
inline void cudaCheck(cudaError_t err, const char* what, const char* file, int line)
{
    if (err != cudaSuccess) {
        std::printf("FAIL %s returned %d (%s) at %s:%d\n", what, static_cast<int>(err),
                    cudaGetErrorString(err), file, line);
        std::exit(1);
    }
}

#define CUDA_CHECK(call) cudaCheck((call), #call, __FILE__, __LINE__)

// Checks both the launch itself and, after synchronising, the kernel's execution.
#define CUDA_CHECK_KERNEL()                       \
    do {                                          \
        CUDA_CHECK(cudaGetLastError());           \
        CUDA_CHECK(cudaDeviceSynchronize());      \
    } while (0)
