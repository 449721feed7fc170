// CUDA face: the legacy cublas.h name; the emulator offers the v2 API under it.
#pragma once
#include "cublas_v2.h"
