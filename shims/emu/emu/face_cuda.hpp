// Selects the CUDA face and defines what nvcc defines for CUDA 13.0.
// __CUDA_ARCH__ stays undefined: the emulator's one compiler pass is a host pass whose code also
// runs as device code, so `#ifdef __CUDA_ARCH__` branches (usually inline PTX) are not taken.
// Build with EMU_DEFINE_ARCH_MACRO (musify emu-run --arch-macro) to define it as EMU_ARCH.
#pragma once
#define EMU_FACE_CUDA 1
#define EMU_FACE_VERSION 13000
#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#ifndef __NVCC__
#define __NVCC__ 1
#endif
#define __CUDACC_VER_MAJOR__ 13
#define __CUDACC_VER_MINOR__ 0
#define __CUDACC_VER_BUILD__ 0
#ifndef CUDA_VERSION
#define CUDA_VERSION 13000
#endif
#ifndef CUDART_VERSION
#define CUDART_VERSION 13000
#endif
#if defined(EMU_DEFINE_ARCH_MACRO) && !defined(__CUDA_ARCH__)
#define __CUDA_ARCH__ EMU_ARCH
#endif
#include "face.hpp"
