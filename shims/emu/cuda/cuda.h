// CUDA face: the driver API basics (emu/driver_face.inc spelled with the cu prefix).
#pragma once
#include "../emu/face_cuda.hpp"
#include "../emu/driver_face.inc"
