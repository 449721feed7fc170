// MUSA face: the runtime API (emu/runtime_face.inc spelled with the musa prefix).
#pragma once
#include "../emu/face_musa.hpp"
#include "../emu/runtime_face.inc"
