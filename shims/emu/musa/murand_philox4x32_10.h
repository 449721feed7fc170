// MUSA face: the Philox header (musify maps curand_philox4x32_x.h here); the whole device API.
#pragma once
#include "murand_kernel.h"
