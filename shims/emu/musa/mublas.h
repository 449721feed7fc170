// MUSA face: muBLAS (emu/cublas.hpp) under mublas* / MUBLAS_* names (MUSA_FACTS §1: cublas_v2.h -> mublas.h).
#pragma once
#include "musa_fp16.h"
#include "../emu/cublas.hpp"
#define EMU_BLAS(x) mublas##x
#define EMU_BLAS_E(x) MUBLAS_##x
#define EMU_BLAS_PREFIX "MUBLAS_"
#include "../emu/blas_face.inc"
// muBLAS's own status spellings that stand for cuBLAS ones (rules/cublas/overrides.yaml): what
// a port's NOT_IMPLEMENTED, and a hand port's nearest statuses for the rest, compare with
constexpr emu::blas::Status MUBLAS_STATUS_NOT_IMPLEMENTED = emu::blas::STATUS_NOT_SUPPORTED;
constexpr emu::blas::Status MUBLAS_STATUS_INVALID_HANDLE = emu::blas::STATUS_NOT_INITIALIZED;
constexpr emu::blas::Status MUBLAS_STATUS_MEMORY_ERROR = emu::blas::STATUS_ALLOC_FAILED;
#undef EMU_BLAS
#undef EMU_BLAS_E
#undef EMU_BLAS_PREFIX
