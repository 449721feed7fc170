// A project's common header, as in public benchmark suites: it includes every library some
// program of the project uses, and its error-check macros name them.
#pragma once
#include <cstdio>
#include <cublasLt.h>
#include <cudnn.h>
#include <nccl.h>
#include <cufft.h>
#include <nvtx3/nvToolsExt.h>
#define CHECK_CUDNN(call)                                                              \
    do {                                                                               \
        cudnnStatus_t s_ = (call);                                                     \
        if (s_ != CUDNN_STATUS_SUCCESS) { std::printf("cudnn error %lld\n", (long long)s_); return 1; } \
    } while (0)
#define CHECK_NCCL(call)                                                               \
    do {                                                                               \
        ncclResult_t r_ = (call);                                                      \
        if (r_ != ncclSuccess) { std::printf("nccl error\n"); return 1; }              \
    } while (0)
