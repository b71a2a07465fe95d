// VirtualMemoryResourceOptions' allocation policy: one table per field from cuda.core's strings to the driver's enums.
#include "core/vmm_policy.h"

#include <nanobind/stl/string.h>

#include <string>
#include <utility>

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

template <class E>
struct Name {
  const char* text;  // nullptr: Python's None
  E value;
};

constexpr Name<CUmemAllocationType> kAllocation[] = {{"pinned", CU_MEM_ALLOCATION_TYPE_PINNED},
                                                     {"managed", CU_MEM_ALLOCATION_TYPE_MANAGED}};
constexpr Name<CUmemLocationType> kLocation[] = {{"device", CU_MEM_LOCATION_TYPE_DEVICE},
                                                 {"host", CU_MEM_LOCATION_TYPE_HOST},
                                                 {"host_numa", CU_MEM_LOCATION_TYPE_HOST_NUMA},
                                                 {"host_numa_current", CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT}};
constexpr Name<CUmemAllocationHandleType> kHandle[] = {{nullptr, CU_MEM_HANDLE_TYPE_NONE},
                                                       {"posix_fd", CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR},
                                                       {"win32_kmt", CU_MEM_HANDLE_TYPE_WIN32_KMT},
                                                       {"fabric", CU_MEM_HANDLE_TYPE_FABRIC}};
constexpr Name<CUmemAllocationGranularity_flags> kGranularity[] = {
    {"minimum", CU_MEM_ALLOC_GRANULARITY_MINIMUM}, {"recommended", CU_MEM_ALLOC_GRANULARITY_RECOMMENDED}};
constexpr Name<CUmemAccess_flags> kAccess[] = {{nullptr, CU_MEM_ACCESS_FLAGS_PROT_NONE},
                                               {"r", CU_MEM_ACCESS_FLAGS_PROT_READ},
                                               {"rw", CU_MEM_ACCESS_FLAGS_PROT_READWRITE}};

template <class E, size_t N>
void read(nb::handle options, const char* field, const Name<E> (&table)[N], E& out, const char* call) {
  if (!nb::hasattr(options, field)) return;
  nb::object v = options.attr(field);
  // The enums are str subclasses: their value is the string itself.
  std::string text = v.is_none() ? std::string() : nb::cast<std::string>(nb::str(v));
  for (const auto& n : table) {
    if (n.text ? (!v.is_none() && text == n.text) : v.is_none()) {
      out = n.value;
      return;
    }
  }
  std::string known;
  for (const auto& n : table) known += std::string(known.empty() ? "" : ", ") + (n.text ? n.text : "None");
  throw nb::value_error((std::string(call) + ": VirtualMemoryResourceOptions." + field + " " +
                         nb::cast<std::string>(nb::repr(v)) + " is not one of " + known).c_str());
}

template <class E, size_t N>
nb::object write(const Name<E> (&table)[N], E value) {
  for (const auto& n : table)
    if (n.value == value) return n.text ? nb::object(nb::str(n.text)) : nb::none();
  return nb::none();
}

}  // namespace

void read_vmm_policy(nb::handle options, VirtualMemoryResourceOptions& out, const char* call) {
  if (options.is_none()) return;
  read(options, "allocation_type", kAllocation, out.allocation_type, call);
  read(options, "location_type", kLocation, out.location_type, call);
  read(options, "handle_type", kHandle, out.handle_type, call);
  read(options, "granularity", kGranularity, out.granularity, call);
  read(options, "self_access", kAccess, out.self_access, call);
  read(options, "peer_access", kAccess, out.peer_access, call);
  if (nb::hasattr(options, "gpu_direct_rdma")) out.gpu_direct_rdma = nb::cast<bool>(options.attr("gpu_direct_rdma"));
}

nb::object vmm_config(const VirtualMemoryResourceOptions& o) {
  nb::object cls = nb::module_::import_("nanocuda._memory_options").attr("VirtualMemoryResourceOptions");
  nb::list peers;
  for (int p : o.peers) peers.append(p);
  return cls(nb::arg("reserve_size") = o.reserve_size, nb::arg("peers") = peers,
             nb::arg("allocation_type") = write(kAllocation, o.allocation_type),
             nb::arg("location_type") = write(kLocation, o.location_type),
             nb::arg("handle_type") = write(kHandle, o.handle_type),
             nb::arg("granularity") = write(kGranularity, o.granularity),
             nb::arg("gpu_direct_rdma") = o.gpu_direct_rdma,
             nb::arg("self_access") = write(kAccess, o.self_access),
             nb::arg("peer_access") = write(kAccess, o.peer_access));
}

}  // namespace nanocuda::py
