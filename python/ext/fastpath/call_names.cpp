// The one table of C++ call names that Python spells differently, and the rewrite of core messages.
#include "fastpath/call_names.h"

#include <cctype>
#include <string>
#include <string_view>

namespace nanocuda::py {

namespace {

struct Rename {
  std::string_view cxx;
  std::string_view python;
};

// Only where the names differ; `Class::member` -> `Class.member` needs no entry.
constexpr Rename kRenames[] = {
    {"Buffer::adopt", "Buffer.from_handle"},
    {"nanocuda::fill_async", "Buffer.fill"},
    {"nanocuda::enable_peer_access", "Device.enable_peer_access"},
    {"nanocuda::disable_peer_access", "Device.disable_peer_access"},
    {"nanocuda::copy", "nanocuda.copy"},
    {"MemoryResource::set_for_device", "Device.memory_resource"},
    {"VirtualMemoryResource::grow", "VirtualMemoryResource.modify_allocation"},
    {"Stream::create", "Device.create_stream"},
    {"Stream::create_green", "Context.create_stream"},
    {"nanocuda::context_sm_resource", "Context.resources"},
    {"nanocuda::split_sm_resource", "SMResource.split"},
    {"nanocuda::create_green_context", "Device.create_context"},
    {"Event::elapsed_time_since", "Event.elapsed_time"},
    {"nanocuda::checkpoint::parse_uuid", "checkpoint.Process.restore"},
    {"nanocuda::checkpoint::state", "checkpoint.Process.state"},
    {"nanocuda::checkpoint::restore_thread_id", "checkpoint.Process.restore_thread_id"},
    {"nanocuda::checkpoint::lock", "checkpoint.Process.lock"},
    {"nanocuda::checkpoint::checkpoint", "checkpoint.Process.checkpoint"},
    {"nanocuda::checkpoint::restore", "checkpoint.Process.restore"},
    {"nanocuda::checkpoint::unlock", "checkpoint.Process.unlock"},
    {"OpaqueArray::create", "Device.create_opaque_array"},
    {"OpaqueArray::copy_from_host", "OpaqueArray.copy_from"},
    {"OpaqueArray::copy_from_device", "OpaqueArray.copy_from"},
    {"OpaqueArray::copy_to_host", "OpaqueArray.copy_to"},
    {"OpaqueArray::copy_to_device", "OpaqueArray.copy_to"},
    {"MipmappedArray::create", "Device.create_mipmapped_array"},
    {"MipmappedArray::level", "MipmappedArray.get_level"},
    {"Kernel::max_potential_block_size_for", "KernelOccupancy.max_potential_block_size"},
    {"Kernel::max_potential_block_size", "KernelOccupancy.max_potential_block_size"},
    {"Kernel::max_active_blocks_per_multiprocessor", "KernelOccupancy.max_active_blocks_per_multiprocessor"},
    {"DeviceMemoryResource::register_mapped", "DeviceMemoryResource.register"},
    {"PinnedMemoryResource::register_mapped", "PinnedMemoryResource.register"},
    {"DeviceMemoryResource::export_buffer", "Buffer.get_ipc_descriptor"},
    {"PinnedMemoryResource::export_buffer", "Buffer.get_ipc_descriptor"},
    {"DeviceMemoryResource::import_buffer", "Buffer.from_ipc_descriptor"},
    {"PinnedMemoryResource::import_buffer", "Buffer.from_ipc_descriptor"},
    {"MemoryResource::import_buffer", "Buffer.from_ipc_descriptor"},
    {"nanocuda::export_ipc_event", "Event.get_ipc_descriptor"},
    {"nanocuda::create_ipc_event", "Event.create_ipc"},
    {"nanocuda::import_ipc_event", "Event.from_ipc_descriptor"},
    {"IpcBufferDescriptor::from_bytes", "IPCBufferDescriptor.from_bytes"},
    {"GraphBuilder::switch_", "GraphBuilder.switch"},
    {"GraphBuilder::host_callback", "GraphBuilder.callback"},
    {"GraphDefinition::add_kernel", "GraphDefinition.launch"},
    {"GraphDefinition::add_memset", "GraphDefinition.memset"},
    {"GraphDefinition::add_child", "GraphDefinition.embed"},
    {"GraphDefinition::add_empty", "GraphDefinition.empty"},
    {"GraphDefinition::add_memcpy", "GraphDefinition.memcpy"},
    {"GraphDefinition::add_host", "GraphDefinition.callback"},
    {"GraphDefinition::add_event_record", "GraphDefinition.record"},
    {"GraphDefinition::add_event_wait", "GraphDefinition.wait"},
    {"GraphDefinition::add_alloc", "GraphDefinition.allocate"},
    {"GraphDefinition::add_free", "GraphDefinition.deallocate"},
    {"GraphDefinition::destroy_node", "GraphNode.destroy"},
    {"DeviceMemoryResource::allocation_handle", "DeviceMemoryResource.get_allocation_handle"},
    {"PinnedMemoryResource::allocation_handle", "PinnedMemoryResource.get_allocation_handle"},
    {"Graph::begin_capture", "Graph.capture"},
    {"Graph::set_kernel_node", "ExecutableKernelNode.update"},
    {"ResourceDesc::from_array", "ResourceDescriptor.from_opaque_array"},
    {"ResourceDesc::from_mipmapped_array", "ResourceDescriptor.from_mipmapped_array"},
    // Core messages of calls whose Python spelling differs.
    {"Device::push_context", "Device.set_current"},
    {"VirtualMemoryResource::set_policy", "VirtualMemoryResource.modify_allocation"},
    {"SystemEventSet::wait", "RegisteredSystemEvents.wait"},
    {"GraphDefinition::child_graph", "ChildGraphNode.child_graph"},
    {"ResourceDesc::from_linear", "ResourceDescriptor.from_linear"},
    {"ResourceDesc::from_pitch2d", "ResourceDescriptor.from_pitch2d"},
    {"TextureObject::TextureObject", "Device.create_texture_object"},
    {"SurfaceObject::SurfaceObject", "Device.create_surface_object"},
    {"nanocuda::backend_flags", "ProgramOptions.as_bytes"},  // ext22: compile option rules in the core
};

// C++ arguments a core message names that a Python caller passes another way.
constexpr Rename kArguments[] = {
    {"(non_blocking = true)", "(StreamOptions(nonblocking=True))"},  // Stream::create_green
};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string python_call_name(std::string_view cxx) {
  for (const Rename& r : kRenames)
    if (r.cxx == cxx) return std::string(r.python);
  // The generic rule: exactly `Class::member`, a class name (capital) and a member (lower case),
  // so a user's namespaced kernel name ("ns::kernel", "a::B::c") is left alone.
  std::size_t sep = cxx.find("::");
  if (sep == std::string_view::npos || sep == 0 || cxx.find("::", sep + 2) != std::string_view::npos ||
      sep + 2 >= cxx.size())
    return std::string(cxx);
  const char first = cxx[0], member = cxx[sep + 2];
  if (!std::isupper(static_cast<unsigned char>(first)) ||
      !(std::islower(static_cast<unsigned char>(member)) || member == '_'))
    return std::string(cxx);
  std::string out(cxx.substr(0, sep));
  out += '.';
  out += cxx.substr(sep + 2);
  return out;
}

std::string python_words(std::string_view message) {
  if (message.find("::") == std::string_view::npos) return std::string(message);  // the usual case
  std::string out;
  out.reserve(message.size());
  std::size_t i = 0;
  while (i < message.size()) {
    // A quoted name ('MyNs::kernel', a user's own text) is copied as it is. An apostrophe after
    // a word ("device 0's") opens nothing.
    if (message[i] == '\'' && (i == 0 || !word_char(message[i - 1]))) {
      std::size_t close = message.find('\'', i + 1);
      if (close == std::string_view::npos) close = message.size() - 1;
      out += message.substr(i, close - i + 1);
      i = close + 1;
      continue;
    }
    if (!word_char(message[i]) || (i > 0 && (word_char(message[i - 1]) || message[i - 1] == ':'))) {
      out += message[i++];
      continue;
    }
    // The longest `word(::word)*` token starting here.
    std::size_t end = i;
    while (true) {
      while (end < message.size() && word_char(message[end])) ++end;
      if (end + 2 < message.size() && message[end] == ':' && message[end + 1] == ':' && word_char(message[end + 2]))
        end += 2;
      else
        break;
    }
    out += python_call_name(message.substr(i, end - i));
    i = end;
  }
  for (const Rename& r : kArguments)
    if (std::size_t at = out.find(r.cxx); at != std::string::npos) out.replace(at, r.cxx.size(), r.python);
  return out;
}

}  // namespace nanocuda::py
