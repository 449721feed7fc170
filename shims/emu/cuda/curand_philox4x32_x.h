// CUDA face: the Philox header, which CUDA's curand_kernel.h includes; here the whole device API.
#pragma once
#include "curand_kernel.h"
