// CUDA face: what a .cu file gets implicitly (the build passes -include cuda_runtime.h): the runtime
// API, the built-in variables, barriers, warp functions, atomics and the device math library.
#pragma once
#include <cstdio>
#include "cuda_runtime_api.h"
#include "device_launch_parameters.h"
#if __has_include("../emu/math.hpp")
#include "../emu/math.hpp"
#endif
