// CUDA face: cuBLAS (emu/cublas.hpp) under cublas* / CUBLAS_* names, including the `_v2` spellings.
#pragma once
#include "cuda_fp16.h"
#include "../emu/cublas.hpp"
#define CUBLAS_VER_MAJOR 13
#define CUBLAS_VER_MINOR 0
#define CUBLAS_VER_PATCH 0
#define CUBLAS_VERSION (CUBLAS_VER_MAJOR * 10000 + CUBLAS_VER_MINOR * 100 + CUBLAS_VER_PATCH)
#define EMU_BLAS(x) cublas##x
#define EMU_BLAS_E(x) CUBLAS_##x
#define EMU_BLAS_PREFIX "CUBLAS_"
#include "../emu/blas_face.inc"
#undef EMU_BLAS
#undef EMU_BLAS_E
#undef EMU_BLAS_PREFIX
#undef EMU_BLAS_STATUS_SUFFIX
