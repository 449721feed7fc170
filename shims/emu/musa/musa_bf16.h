// MUSA face: bfloat16 (emu/bf16.hpp) as __mt_bfloat16 / __mt_bfloat162 (MUSA_FACTS §1); the functions
// (__float2bfloat16, __hadd, ...) keep CUDA's names.
#pragma once
#include "musa_fp16.h"
#include "../emu/bf16.hpp"
EMU_BF16_FACE_NAMES(mt)
