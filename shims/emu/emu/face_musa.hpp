// Selects the MUSA face and defines what mcc defines for MUSA SDK 5.2 (MUSA_FACTS §2).
// __MUSA_ARCH__ stays undefined unless EMU_DEFINE_ARCH_MACRO is set (then it is EMU_ARCH:
// 210, 220 or 310), for the reason given in face_cuda.hpp.
#pragma once
#define EMU_FACE_MUSA 1
#define EMU_FACE_VERSION 50200
#ifndef __MUSACC__
#define __MUSACC__ 1
#endif
#ifndef MUSA_VERSION
#define MUSA_VERSION 50200
#endif
#ifndef MUSART_VERSION
#define MUSART_VERSION 50200
#endif
#if defined(EMU_DEFINE_ARCH_MACRO) && !defined(__MUSA_ARCH__)
#define __MUSA_ARCH__ EMU_ARCH
#endif
#include "face.hpp"
