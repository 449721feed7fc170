// MUSA face: half precision (emu/half.hpp).  `half`/`__half`/`half2` keep their names on MUSA; the
// __nv_half spellings become __mt_half (MUSA_FACTS §1).
#pragma once
#include "../emu/half.hpp"
EMU_HALF_FACE_NAMES(mt)
