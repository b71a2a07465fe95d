// The table of Buffers whose address Python has read (MemoryResource.deallocate's check).
#include "core/seen_buffers.h"

#include <nanobind/nanobind.h>

#include <algorithm>
#include <unordered_set>

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

// Under the GIL (every caller holds it). A pointer here may name a Buffer long gone: it is
// only looked up in nanobind's table of live instances, never read, until that finds it.
std::unordered_set<const PyBuffer*> g_seen;
std::size_t g_prune_at = 64;

// The PyBuffer when `p` is still a live, initialized Buffer instance; else null.
const PyBuffer* alive(const PyBuffer* p) {
  nb::object o = nb::find(*p);
  if (!o.is_valid() || !nb::inst_ready(o)) return nullptr;
  return nb::inst_ptr<PyBuffer>(o);
}

bool open_and_owning(const PyBuffer* p) {
  const PyBuffer* b = alive(p);
  return b && !b->buffer.is_closed() && b->buffer.is_owning();
}

}  // namespace

void note_address_read(const PyBuffer& b) {
  g_seen.insert(&b);
  if (g_seen.size() < g_prune_at) return;
  // Amortized: the table holds at most about twice the Buffers whose address is in use.
  std::erase_if(g_seen, [](const PyBuffer* p) { return !open_and_owning(p); });
  g_prune_at = 2 * g_seen.size() + 64;
}

const PyBuffer* live_buffer_at(const MemoryResource& mr, CUdeviceptr address) {
  for (const PyBuffer* p : g_seen) {
    if (!open_and_owning(p)) continue;
    const Buffer& b = p->buffer;
    CUdeviceptr start = b.ptr();
    if (b.memory_resource().get() == &mr && address >= start && address - start < std::max<std::size_t>(b.size(), 1))
      return p;
  }
  return nullptr;
}

}  // namespace nanocuda::py
