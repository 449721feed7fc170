// Name prefixes of the two faces. A face header defines EMU_FACE_CUDA or EMU_FACE_MUSA and
// includes this file; the *_face.inc templates then spell every public name through these
// macros, so one template declares cudaMalloc on the CUDA face and musaMalloc on the MUSA face
// (MUSA_FACTS §1 naming rules) and neither face declares the other's names.
#pragma once

#if defined(EMU_FACE_CUDA) && defined(EMU_FACE_MUSA)
#error "the CUDA and MUSA faces of the emulator cannot be mixed in one translation unit"
#endif

#if defined(EMU_FACE_MUSA)
#define EMU_RT(x) musa##x     // runtime: musaMalloc, musaError_t, musaMemcpyHostToDevice
#define EMU_RTU(x) MUSA##x    // upper case: MUSA_SUCCESS, MUSART_VERSION
#define EMU_DRV(x) mu##x      // driver functions: muInit, muMemAlloc
#define EMU_DRVT(x) MU##x     // driver types: MUresult, MUdeviceptr
#define EMU_BLAS(x) mublas##x
#define EMU_BLASU(x) MUBLAS##x
#define EMU_RAND(x) murand##x
#define EMU_RANDU(x) MURAND##x
#define EMU_FACE_NAME "MUSA"
#else
#ifndef EMU_FACE_CUDA
#define EMU_FACE_CUDA 1
#endif
#define EMU_RT(x) cuda##x
#define EMU_RTU(x) CUDA##x
#define EMU_DRV(x) cu##x
#define EMU_DRVT(x) CU##x
#define EMU_BLAS(x) cublas##x
#define EMU_BLASU(x) CUBLAS##x
#define EMU_RAND(x) curand##x
#define EMU_RANDU(x) CURAND##x
#define EMU_FACE_NAME "CUDA"
#endif

#define EMU_STR2(x) #x
#define EMU_STR(x) EMU_STR2(x)
