// MUSA face: the driver API basics (emu/driver_face.inc spelled with the mu prefix).
#pragma once
#include "../emu/face_musa.hpp"
#include "../emu/driver_face.inc"
