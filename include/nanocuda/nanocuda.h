// The whole public C++ API of nanocuda in one include.
#pragma once

#include "nanocuda/buffer.h"
#include "nanocuda/context.h"
#include "nanocuda/copy.h"
#include "nanocuda/device.h"
#include "nanocuda/error.h"
#include "nanocuda/event.h"
#include "nanocuda/pinned_buffer.h"
#include "nanocuda/stream.h"
#include "nanocuda/tensor_map.h"
#include "nanocuda/version.h"
