// What the embedding runtime does around the core's waits for the device (Python: drop the GIL).
#pragma once

namespace nanocuda {

// Called around every wait of the core for the device: the syncs (Stream, StreamRef, Event,
// Device, so Stream::close too) and the frees that wait, often from a destructor the caller
// cannot see coming (PinnedBuffer's; a Buffer's from a PinnedMemoryResource or
// ManagedMemoryResource without a pool, or a VirtualMemoryResource). A host function queued on
// the device (cuLaunchHostFunc) must finish before those return, so a lock it takes must not be
// held across them: the Python extension's hooks release the GIL, which a Python callback
// needs. The core holds none of its own locks there. `before` returns a token that `after`
// gets back. Set once, before the first wait.
struct WaitHooks {
  void* (*before)() noexcept = nullptr;
  void (*after)(void* token) noexcept = nullptr;
};
void set_wait_hooks(WaitHooks hooks) noexcept;

}  // namespace nanocuda
