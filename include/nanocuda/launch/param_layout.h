// Forwarding header: a kernel's parameter layout lives in the compile layer (compile/param_layout.h).
#pragma once

#include "nanocuda/compile/param_layout.h"
