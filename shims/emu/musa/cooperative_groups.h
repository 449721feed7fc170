// cooperative_groups (same names on both faces).
#pragma once
#include "musa_runtime_api.h"
#include "../emu/cooperative_groups.hpp"
