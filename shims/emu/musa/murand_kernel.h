// MUSA face: muRAND device API (emu/curand_device.hpp): murandState, murand_init, murand_uniform, ...
// The Philox state is murandStatePhilox4_32_10_t (torchada) and murand_state_philox4x32_10 (musify's table).
#pragma once
#include "murand.h"
#include "../emu/curand_device.hpp"
#define EMU_RAND(x) murand##x
#include "../emu/rand_device_face.inc"
#undef EMU_RAND
typedef emu::rand::PhiloxState murand_state_philox4x32_10;
