// CUDA face: half precision (emu/half.hpp).  Also spells the types __nv_half, nv_half, ... as CUDA does.
#pragma once
#include "../emu/half.hpp"
EMU_HALF_FACE_NAMES(nv)
