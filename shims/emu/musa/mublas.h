// MUSA face: muBLAS (emu/cublas.hpp) under mublas* / MUBLAS_* names (MUSA_FACTS §1: cublas_v2.h -> mublas.h).
#pragma once
#include "musa_fp16.h"
#include "../emu/cublas.hpp"
#define EMU_BLAS(x) mublas##x
#define EMU_BLAS_E(x) MUBLAS_##x
#define EMU_BLAS_PREFIX "MUBLAS_"
#include "../emu/blas_face.inc"
#undef EMU_BLAS
#undef EMU_BLAS_E
#undef EMU_BLAS_PREFIX
