// The emulator's runtime as one translation unit: the non-template functions of the headers
// (thread pool, grid runner, a block's scheduler, memory), compiled once per flag set by
// musify/emu/build.py and linked into every program built with -DEMU_RUNTIME_LINKED, which then
// sees their declarations only (config.hpp). The build passes -include with the face's runtime
// header (cuda_runtime.h or musa_runtime.h), as for a program.
#ifndef EMU_RUNTIME_IMPL
#error "compile runtime.cpp with -DEMU_RUNTIME_IMPL (musify/emu/build.py does)"
#endif
