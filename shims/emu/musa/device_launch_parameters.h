// threadIdx, blockIdx, blockDim, gridDim and warpSize.
#pragma once
#include "../emu/face_musa.hpp"
#include "../emu/block.hpp"
