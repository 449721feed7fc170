// cooperative_groups::reduce and its operators.
#pragma once
#include "../cooperative_groups.h"
#include "../../emu/cg_reduce.hpp"
