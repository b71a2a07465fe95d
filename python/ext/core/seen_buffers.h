// The Buffers whose address Python has read, so MemoryResource.deallocate(int, size) can
// refuse the address of a live Buffer (its own close would free it again).
#pragma once

#include <cuda.h>

#include "core/py_buffer.h"

namespace nanocuda::py {

// Records `b` when its address leaves as an int (ptr, handle, __cuda_array_interface__).
// Never called at allocate or close: those paths pay nothing. Entries are not removed at
// close; each is checked against the Buffer it names before it counts (see DESIGN.md).
void note_address_read(const PyBuffer& b);
// The open Buffer of `mr` (owning its memory) whose range holds `address`, among those whose
// address Python has read; null when there is none.
const PyBuffer* live_buffer_at(const MemoryResource& mr, CUdeviceptr address);

}  // namespace nanocuda::py
