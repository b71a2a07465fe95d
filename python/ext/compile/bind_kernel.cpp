// Python bindings for kernels: attributes, occupancy and parameter layout, with cuda.core's names beside nanocuda's.
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>

#include "compile/compile_bindings.h"
#include "core/py_size.h"
#include "nanocuda/compile/kernel.h"
#include "nanocuda/compile/library.h"
#include "nanocuda/compile/object_code.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/launch/launch_config.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

std::array<unsigned, 3> to_dim3(const nb::handle& v) {
  if (nb::isinstance<nb::int_>(v)) return {nb::cast<unsigned>(v), 1, 1};
  auto seq = nb::cast<std::vector<unsigned>>(v);
  if (seq.empty() || seq.size() > 3) throw ValueError("expected an int or 1 to 3 ints");
  std::array<unsigned, 3> out{1, 1, 1};
  for (size_t i = 0; i < seq.size(); ++i) out[i] = seq[i];
  return out;
}

std::array<unsigned, 3> dims(const Dim3& d) { return {d.x, d.y, d.z}; }

// Kernel.occupancy: the occupancy calculator for one kernel.
struct Occupancy {
  Kernel kernel;
};

// A named tuple type made once (cuda.core returns these where nanocuda returned plain tuples).
nb::object named_tuple(const char* name, const char* fields) {
  return nb::module_::import_("collections").attr("namedtuple")(name, fields);
}

nb::object& param_info_type() {
  static nb::object* type = new nb::object(named_tuple("ParamInfo", "offset size"));
  return *type;
}

nb::object& block_size_result_type() {
  static nb::object* type =
      new nb::object(named_tuple("MaxPotentialBlockSizeOccupancyResult", "min_grid_size max_block_size"));
  return *type;
}

// The dynamic shared memory of an occupancy query: cuda.core's positional name or
// nanocuda's keyword, not both.
size_t smem_of(const nb::handle& positional, const nb::handle& keyword, const char* call) {
  bool has_kw = !keyword.is_none();
  if (has_kw && !positional.is_none())
    throw TypeError(std::string("KernelOccupancy.") + call +
                    ": give the dynamic shared memory once (positionally or as dynamic_shared_memory=)");
  nb::handle v = has_kw ? keyword : positional;
  if (v.is_none()) return 0;
  if (PyCallable_Check(v.ptr()))
    throw TypeError(std::string("KernelOccupancy.") + call +
                    ": a per-block-size shared memory callable is not supported; pass bytes as an int "
                    "(or, to max_potential_block_size, a cuda.bindings CUoccupancyB2DSize C callback)");
  if (PyBool_Check(v.ptr()) || !nb::hasattr(v, "__index__"))
    throw TypeError(std::string("KernelOccupancy.") + call + ": the dynamic shared memory is a number of bytes (an int), got " +
                    Py_TYPE(v.ptr())->tp_name);
  return size_arg(v.attr("__index__")(), (std::string("KernelOccupancy.") + call).c_str(), "the dynamic shared memory");
}

// A cuda.bindings CUoccupancyB2DSize (a C function size_t(int)), or nullptr for anything else.
CUoccupancyB2DSize b2d_callback_of(const nb::handle& v) {
  if (v.is_none() || std::string(Py_TYPE(v.ptr())->tp_name).find("CUoccupancyB2DSize") == std::string::npos)
    return nullptr;
  nb::object address = nb::hasattr(v, "getPtr") ? v.attr("getPtr")() : nb::int_(v);
  return reinterpret_cast<CUoccupancyB2DSize>(static_cast<std::uintptr_t>(nb::cast<unsigned long long>(address)));
}

// cuda.core's LaunchConfig form of the cluster queries reads the device from stream=, a
// required keyword there; nanocuda also takes device=. Neither is cuda.core's TypeError.
void require_stream_or_device(const nb::handle& stream, const nb::handle& device, const char* call) {
  if (stream.is_none() && device.is_none())
    throw TypeError(std::string("KernelOccupancy.") + call +
                    "() missing 1 required keyword-only argument: 'stream' (or give device=)");
}

// (grid, block, dynamic shared memory) of a LaunchConfig argument.
const LaunchConfig& launch_config_of(const nb::handle& config, const char* call) {
  if (!nb::isinstance<LaunchConfig>(config))
    throw TypeError(std::string("KernelOccupancy.") + call + ": config must be a nanocuda.LaunchConfig, got " +
                    nb::cast<std::string>(nb::str(config.type().attr("__name__"))));
  return *nb::inst_ptr<LaunchConfig>(config);
}

// A device from a `stream=` (its device) or `device=` keyword; the default Device() when neither.
Device device_of(const nb::handle& stream, const nb::handle& device) {
  if (!device.is_none()) return to_device(device, "KernelOccupancy");
  if (!stream.is_none() && nb::hasattr(stream, "device")) return to_device(stream.attr("device"), "KernelOccupancy");
  return Device();
}

// cuda.core's KernelAttributes: a kernel's attributes on one device, read when asked (so
// set_max_dynamic_shared_memory shows at once); attrs[device] is the view on another device.
struct AttributesView {
  Kernel kernel;
  Device device;
};

}  // namespace

#define NANOCUDA_KERNEL_ATTRIBUTE(py_name, field, doc) \
  .def_prop_ro(py_name, [](const AttributesView& v) { return v.kernel.attributes(v.device).field; }, doc)

void bind_kernel(nb::module_& m) {
  nb::class_<AttributesView>(m, "KernelAttributes", "A kernel's attributes on one device; attrs[device] gives another device's.")
      NANOCUDA_KERNEL_ATTRIBUTE("num_registers", num_registers, "Registers per thread.")
      NANOCUDA_KERNEL_ATTRIBUTE("num_regs", num_registers, "Registers per thread (cuda.core's name for num_registers).")
      NANOCUDA_KERNEL_ATTRIBUTE("shared_size_bytes", shared_size_bytes, "Static shared memory per block, bytes.")
      NANOCUDA_KERNEL_ATTRIBUTE("max_dynamic_shared_size_bytes", max_dynamic_shared_size_bytes, "Dynamic shared memory a launch may request, bytes.")
      NANOCUDA_KERNEL_ATTRIBUTE("max_threads_per_block", max_threads_per_block, "Largest block this kernel can launch with.")
      NANOCUDA_KERNEL_ATTRIBUTE("local_size_bytes", local_size_bytes, "Local memory per thread, bytes.")
      NANOCUDA_KERNEL_ATTRIBUTE("const_size_bytes", const_size_bytes, "Constant memory used, bytes.")
      NANOCUDA_KERNEL_ATTRIBUTE("ptx_version", ptx_version, "PTX virtual architecture, major*10 + minor.")
      NANOCUDA_KERNEL_ATTRIBUTE("binary_version", binary_version, "Binary architecture, major*10 + minor.")
      NANOCUDA_KERNEL_ATTRIBUTE("preferred_shared_memory_carveout", preferred_shared_memory_carveout, "Preferred shared-memory share of L1, percent.")
      NANOCUDA_KERNEL_ATTRIBUTE("max_shared_memory_per_block_optin", max_shared_memory_per_block_optin, "Shared memory a block may opt in to, bytes.")
      NANOCUDA_KERNEL_ATTRIBUTE("cache_mode_ca", cache_mode_ca, "Compiled with global loads cached in L1 (-dlcm=ca).")
      NANOCUDA_KERNEL_ATTRIBUTE("cluster_size_must_be_set", cluster_size_must_be_set, "A launch must give a cluster shape.")
      NANOCUDA_KERNEL_ATTRIBUTE("required_cluster_width", required_cluster_width, "Compile-time cluster width (0: none).")
      NANOCUDA_KERNEL_ATTRIBUTE("required_cluster_height", required_cluster_height, "Compile-time cluster height (0: none).")
      NANOCUDA_KERNEL_ATTRIBUTE("required_cluster_depth", required_cluster_depth, "Compile-time cluster depth (0: none).")
      NANOCUDA_KERNEL_ATTRIBUTE("non_portable_cluster_size_allowed", non_portable_cluster_size_allowed, "Clusters above 8 blocks are allowed.")
      NANOCUDA_KERNEL_ATTRIBUTE("cluster_scheduling_policy_preference", cluster_scheduling_policy_preference, "CUclusterSchedulingPolicy value.")
      .def_prop_ro("device", [](const AttributesView& v) { return v.device; }, "The device these attributes are read on.")
      .def("__getitem__",
           [](const AttributesView& v, nb::handle device) {
             if (device.is_none() || PyBool_Check(device.ptr()) || !nb::hasattr(device, "__index__"))
               throw TypeError("KernelAttributes[device]: device must be a nanocuda.Device or an ordinal int, got " +
                               std::string(Py_TYPE(device.ptr())->tp_name));
             return AttributesView{v.kernel, to_device(device, "KernelAttributes[device]")};
           },
           nb::arg("device").none(), "The same kernel's attributes on `device` (a Device or an ordinal).");

  nb::class_<Occupancy>(m, "KernelOccupancy", "Occupancy calculator for one kernel.")
      .def("max_active_blocks_per_multiprocessor",
           [](const Occupancy& o, int block_size, nb::object smem, nb::object smem_kw, nb::object device) {
             return o.kernel.max_active_blocks_per_multiprocessor(
                 block_size, smem_of(smem, smem_kw, "max_active_blocks_per_multiprocessor"), to_device(device, "KernelOccupancy"));
           },
           nb::arg("block_size"), nb::arg("dynamic_shared_memory_size") = nb::none(), nb::kw_only(),
           nb::arg("dynamic_shared_memory") = nb::none(), nb::arg("device") = nb::none(),
           "Blocks of block_size threads resident per SM at once.")
      .def("max_potential_block_size",
           [](const Occupancy& o, nb::object smem, int limit, nb::object smem_kw, nb::object device) {
             if (CUoccupancyB2DSize fn = b2d_callback_of(smem_kw.is_none() ? smem : smem_kw)) {
               auto [grid, block] = o.kernel.max_potential_block_size_for(fn, limit, to_device(device, "KernelOccupancy"));
               return block_size_result_type()(grid, block);
             }
             auto [grid, block] = o.kernel.max_potential_block_size(
                 smem_of(smem, smem_kw, "max_potential_block_size"), limit, to_device(device, "KernelOccupancy"));
             return block_size_result_type()(grid, block);
           },
           nb::arg("dynamic_shared_memory_needed") = nb::none(), nb::arg("block_size_limit") = 0,
           nb::kw_only(), nb::arg("dynamic_shared_memory") = nb::none(), nb::arg("device") = nb::none(),
           "(min_grid_size, max_block_size) for full occupancy, a named tuple; the dynamic shared memory "
           "is bytes, or a cuda.bindings CUoccupancyB2DSize callback of the block size.")
      .def("available_dynamic_shared_memory_per_block",
           [](const Occupancy& o, int blocks, int block_size, nb::object device) {
             return o.kernel.available_dynamic_shared_memory_per_block(blocks, block_size, to_device(device, "KernelOccupancy"));
           },
           nb::arg("num_blocks_per_multiprocessor"), nb::arg("block_size"), nb::kw_only(),
           nb::arg("device") = nb::none(), "Dynamic shared memory per block, bytes, at that occupancy.")
      .def("max_potential_cluster_size",
           [](const Occupancy& o, nb::object config, nb::object stream, nb::object device) {
             const LaunchConfig& c = launch_config_of(config, "max_potential_cluster_size");
             require_stream_or_device(stream, device, "max_potential_cluster_size");
             return o.kernel.max_potential_cluster_size(dims(c.blocks()), dims(c.block), c.shared_mem,
                                                        device_of(stream, device));
           },
           nb::arg("config"), nb::kw_only(), nb::arg("stream") = nb::none(), nb::arg("device") = nb::none(),
           "Largest cluster this kernel can launch with under config (its cluster is ignored).")
      .def("max_active_clusters",
           [](const Occupancy& o, nb::object config, nb::object block, nb::object cluster, nb::object stream,
              size_t smem, nb::object device) {
             if (block.is_none() && cluster.is_none()) {  // cuda.core's form: a LaunchConfig
               const LaunchConfig& c = launch_config_of(config, "max_active_clusters");
               require_stream_or_device(stream, device, "max_active_clusters");
               // No cluster shape is cuda.core's cluster of one block.
               std::array<unsigned, 3> cluster_dims = c.has_cluster() ? dims(c.cluster) : std::array<unsigned, 3>{1, 1, 1};
               return o.kernel.max_active_clusters(dims(c.grid), dims(c.block), cluster_dims, c.shared_mem,
                                                   device_of(stream, device));
             }
             if (block.is_none() || cluster.is_none())
               throw TypeError("KernelOccupancy.max_active_clusters: give (config) or (grid, block, cluster)");
             return o.kernel.max_active_clusters(to_dim3(config), to_dim3(block), to_dim3(cluster), smem,
                                                 device_of(stream, device));
           },
           nb::arg("config"), nb::arg("block") = nb::none(), nb::arg("cluster") = nb::none(), nb::kw_only(),
           nb::arg("stream") = nb::none(), nb::arg("dynamic_shared_memory") = 0, nb::arg("device") = nb::none(),
           "Clusters that can be co-resident: (config, stream=) as cuda.core, or (grid, block, cluster) "
           "with grid in clusters, as LaunchConfig counts it.");

  nb::class_<Kernel>(m, "Kernel", "A kernel in loaded code; keeps its library loaded.", nb::is_weak_referenceable())
      .def_prop_ro("name", &Kernel::name, "The kernel's (mangled, for C++) name.")
      .def_prop_ro("handle", [](const Kernel& k) { return reinterpret_cast<uint64_t>(k.handle()); },
                   "The CUkernel handle as an int.")
      .def_prop_ro("param_layout",
                   [](const Kernel& k) {
                     std::vector<std::pair<uint32_t, uint32_t>> out;
                     for (const auto& p : k.param_layout().params) out.emplace_back(p.offset, p.size);
                     return out;
                   },
                   "[(offset, size), ...] of each parameter, in bytes.")
      .def_prop_ro("num_arguments", [](const Kernel& k) { return k.param_layout().params.size(); },
                   "The number of parameters.")
      .def_prop_ro("arguments_info",
                   [](const Kernel& k) {
                     nb::list out;
                     for (const auto& p : k.param_layout().params) out.append(param_info_type()(p.offset, p.size));
                     return out;
                   },
                   "[ParamInfo(offset, size), ...] of each parameter, in bytes (named tuples).")
      .def_prop_ro("attributes", [](const Kernel& k) { return AttributesView{k, Device()}; },
                   "KernelAttributes on the current device; attributes[device] for others.")
      .def("get_attributes", [](const Kernel& k, nb::object d) { return AttributesView{k, to_device(d, "Kernel.get_attributes")}; },
           nb::arg("device") = nb::none(), "KernelAttributes on `device` (default: the current device).")
      // Kernel.from_handle is bound with the other cuda.core object protocols (core/bind_protocols.cpp).
      .def_prop_ro("occupancy", [](const Kernel& k) { return Occupancy{k}; },
                   "KernelOccupancy: occupancy queries for this kernel.")
      .def("set_max_dynamic_shared_memory",
           [](const Kernel& k, int bytes, nb::object d) { k.set_max_dynamic_shared_memory(bytes, to_device(d, "Kernel.set_max_dynamic_shared_memory")); },
           nb::arg("bytes"), nb::kw_only(), nb::arg("device") = nb::none(),
           "Allow launches with up to `bytes` of dynamic shared memory (above 48 KiB needs this).")
      .def("set_preferred_shared_memory_carveout",
           [](const Kernel& k, int percent, nb::object d) {
             k.set_preferred_shared_memory_carveout(percent, to_device(d, "Kernel.set_preferred_shared_memory_carveout"));
           },
           nb::arg("percent"), nb::kw_only(), nb::arg("device") = nb::none(),
           "Preferred shared-memory share of L1/shared, 0-100 percent (a hint).");
}

}  // namespace nanocuda::py
