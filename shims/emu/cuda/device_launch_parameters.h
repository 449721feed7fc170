// threadIdx, blockIdx, blockDim, gridDim and warpSize.
#pragma once
#include "../emu/face_cuda.hpp"
#include "../emu/block.hpp"
