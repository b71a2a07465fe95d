// Events shared between processes (cuIpcGetEventHandle / cuIpcOpenEventHandle).
#pragma once

#include <cuda.h>

#include <string>
#include <string_view>

#include "nanocuda/core/event.h"

namespace nanocuda {

// A new event that other processes can open: interprocess, timing disabled (the driver
// requires both); not yet recorded.
[[nodiscard]] Event create_ipc_event(const Device& device, bool blocking_sync = false);
// The 64-byte handle of an interprocess event (ValueError for any other event), as bytes.
[[nodiscard]] std::string export_ipc_event(const Event& event);
// Opens a handle exported by another process; the Event closes only this process's copy.
// `blocking_sync` is the exporter's flag, carried for is_blocking_sync (the handle lacks it).
// ValueError when `handle` is not 64 bytes; CudaError when the driver refuses it.
[[nodiscard]] Event import_ipc_event(const Device& device, std::string_view handle, bool blocking_sync = false);

}  // namespace nanocuda
