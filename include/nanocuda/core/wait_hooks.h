// What the embedding runtime does around the core's hidden waits for the device (Python: drop the GIL).
#pragma once

namespace nanocuda {

// Called around the waits a caller cannot see coming: the synchronous frees of page-locked and
// managed memory (PinnedBuffer's close() and destructor, the deallocate() of a PinnedMemoryResource
// or ManagedMemoryResource without a pool). A host function queued on the device
// (cuLaunchHostFunc) must finish before those return, so a lock it takes must not be held
// across them: the Python extension's hooks release the GIL, which a Python callback needs.
// `before` returns a token that `after` gets back. Set once, before the first wait.
struct WaitHooks {
  void* (*before)() noexcept = nullptr;
  void (*after)(void* token) noexcept = nullptr;
};
void set_wait_hooks(WaitHooks hooks) noexcept;

}  // namespace nanocuda
