// CUDA face: cuRAND device API (emu/curand_device.hpp): curandState, curand_init, curand_uniform, ...
#pragma once
#include "curand.h"
#include "../emu/curand_device.hpp"
#define EMU_RAND(x) curand##x
#include "../emu/rand_device_face.inc"
#undef EMU_RAND
