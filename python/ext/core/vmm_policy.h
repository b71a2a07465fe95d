// VirtualMemoryResourceOptions' allocation policy between Python (cuda.core's strings) and the C++ options.
#pragma once

#include <nanobind/nanobind.h>

#include "nanocuda/core/virtual_memory_resource.h"

namespace nanocuda::py {

// Reads allocation_type, location_type, handle_type, granularity, gpu_direct_rdma,
// self_access and peer_access from a VirtualMemoryResourceOptions (attributes it lacks keep
// their defaults); an unknown string is a ValueError naming `call` and the field.
void read_vmm_policy(nanobind::handle options, VirtualMemoryResourceOptions& out, const char* call);

// A nanocuda.VirtualMemoryResourceOptions holding `o` (VirtualMemoryResource.config).
[[nodiscard]] nanobind::object vmm_config(const VirtualMemoryResourceOptions& o);

}  // namespace nanocuda::py
