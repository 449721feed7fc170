// CUDA face: bfloat16 (emu/bf16.hpp) as __nv_bfloat16 / __nv_bfloat162; includes cuda_fp16.h as CUDA's does.
#pragma once
#include "cuda_fp16.h"
#include "../emu/bf16.hpp"
EMU_BF16_FACE_NAMES(nv)
