// CUDA face: the runtime API (emu/runtime_face.inc spelled with the cuda prefix).
#pragma once
#include "../emu/face_cuda.hpp"
#include "../emu/runtime_face.inc"
