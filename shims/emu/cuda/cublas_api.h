// CUDA face: cublas_api.h, which cublas_v2.h wraps; the same API here.
#pragma once
#include "cublas_v2.h"
