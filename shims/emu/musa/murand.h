// MUSA face: muRAND host API (emu/curand_host.hpp) under murand* / MURAND_* names (MUSA_FACTS §1).
#pragma once
#include "../emu/curand_host.hpp"
#define EMU_RAND(x) murand##x
#define EMU_RAND_E(x) MURAND_##x
#include "../emu/rand_host_face.inc"
#undef EMU_RAND
#undef EMU_RAND_E
