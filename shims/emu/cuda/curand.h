// CUDA face: cuRAND host API (emu/curand_host.hpp) under curand* / CURAND_* names.
#pragma once
#include "../emu/curand_host.hpp"
#define CURAND_VERSION 10400
#define EMU_RAND(x) curand##x
#define EMU_RAND_E(x) CURAND_##x
#include "../emu/rand_host_face.inc"
#undef EMU_RAND
#undef EMU_RAND_E
