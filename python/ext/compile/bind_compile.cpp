// Python bindings for runtime compilation: ProgramOptions, Program, ObjectCode, Kernel, link.
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "nanocuda/compile/local_includes.h"
#include "nanocuda/compile/compile_cache.h"
#include "nanocuda/compile/library_search.h"
#include "nanocuda/compile/nvrtc_api.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/compile/library.h"
#include "nanocuda/compile/linker.h"
#include "nanocuda/compile/program.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

Device to_device(const nb::object& device) {
  return Device(device.is_none() ? 0 : nb::cast<int>(device.attr("__index__")()));
}

std::string fspath(const nb::object& path) {
  nb::str text = nb::str(nb::module_::import_("os").attr("fspath")(path));
  return std::string(text.c_str());
}

// bytes-like -> the image; str / os.PathLike -> read that file.
ObjectCode to_object_code(CodeType type, const nb::object& data) {
  if (nb::isinstance<nb::bytes>(data)) {
    nb::bytes b = nb::borrow<nb::bytes>(data);
    return ObjectCode::from_bytes(type, std::string(b.c_str(), b.size()));
  }
  if (nb::isinstance<nb::str>(data) || nb::hasattr(data, "__fspath__")) {
    return ObjectCode::from_file(type, fspath(data));
  }
  nb::object as_bytes = nb::module_::import_("builtins").attr("bytes")(data);  // bytearray, memoryview
  return to_object_code(type, as_bytes);
}

std::array<unsigned, 3> to_dim3(const nb::object& v) {
  if (nb::isinstance<nb::int_>(v)) return {nb::cast<unsigned>(v), 1, 1};
  auto seq = nb::cast<std::vector<unsigned>>(v);
  if (seq.empty() || seq.size() > 3) throw ValueError("expected an int or 1 to 3 ints");
  std::array<unsigned, 3> out{1, 1, 1};
  for (size_t i = 0; i < seq.size(); ++i) out[i] = seq[i];
  return out;
}

// Kernel.occupancy: the occupancy calculator for one kernel.
struct Occupancy {
  Kernel kernel;
};

}  // namespace

void bind_compile(nb::module_& m) {
  nb::class_<ProgramOptions>(m, "ProgramOptions", "NVRTC options; every field is keyword-only.")
      .def("__init__",
           [](ProgramOptions* self, std::string arch, std::string std_,
              std::vector<std::string> defines, std::vector<std::string> include_dirs,
              bool fast_math, bool lineinfo, bool debug, int max_registers,
              bool relocatable_device_code, bool default_device,
              std::vector<std::string> extra_flags) {
             new (self) ProgramOptions{std::move(arch), std::move(std_), std::move(defines),
                                       std::move(include_dirs), fast_math, lineinfo, debug,
                                       max_registers, relocatable_device_code, default_device,
                                       std::move(extra_flags)};
           },
           nb::kw_only(), nb::arg("arch") = "", nb::arg("std") = "c++17",
           nb::arg("defines") = std::vector<std::string>{},
           nb::arg("include_dirs") = std::vector<std::string>{}, nb::arg("fast_math") = false,
           nb::arg("lineinfo") = false, nb::arg("debug") = false, nb::arg("max_registers") = 0,
           nb::arg("relocatable_device_code") = false, nb::arg("default_device") = true,
           nb::arg("extra_flags") = std::vector<std::string>{},
           "arch: 'sm_90a', '90a', 'compute_90a' (default: device 0's). defines: 'NAME' or "
           "'NAME=VALUE' strings.")
      .def_rw("arch", &ProgramOptions::arch, "Target: '90a', 'sm_90a' or 'compute_90'; empty means device 0's.")
      .def_rw("std", &ProgramOptions::std, "C++ standard passed as -std= (default 'c++17').")
      .def_rw("defines", &ProgramOptions::defines, "Macros as 'NAME' or 'NAME=VALUE' strings (-D).")
      .def_rw("include_dirs", &ProgramOptions::include_dirs, "Folders searched for #include, before the toolkit's (-I).")
      .def_rw("fast_math", &ProgramOptions::fast_math, "--use_fast_math.")
      .def_rw("lineinfo", &ProgramOptions::lineinfo, "-lineinfo: source lines for profilers.")
      .def_rw("debug", &ProgramOptions::debug, "-G: device debug information.")
      .def_rw("max_registers", &ProgramOptions::max_registers, "--maxrregcount; 0 leaves it to NVRTC.")
      .def_rw("relocatable_device_code", &ProgramOptions::relocatable_device_code, "-rdc=true, for linking with link().")
      .def_rw("default_device", &ProgramOptions::default_device, "-default-device: unannotated functions are device code (on by default).")
      .def_rw("extra_flags", &ProgramOptions::extra_flags, "Further NVRTC flags, passed as given.")
      .def("__repr__", [](const ProgramOptions& o) {
        return "<nanocuda.ProgramOptions arch='" + o.arch + "' std='" + o.std + "'>";
      });

  nb::class_<KernelAttributes>(m, "KernelAttributes", "A kernel's attributes on one device.")
      .def_ro("num_registers", &KernelAttributes::num_registers, "Registers per thread.")
      .def_ro("shared_size_bytes", &KernelAttributes::shared_size_bytes, "Static shared memory per block, bytes.")
      .def_ro("max_dynamic_shared_size_bytes", &KernelAttributes::max_dynamic_shared_size_bytes, "Dynamic shared memory a launch may request, bytes.")
      .def_ro("max_threads_per_block", &KernelAttributes::max_threads_per_block, "Largest block this kernel can launch with.")
      .def_ro("local_size_bytes", &KernelAttributes::local_size_bytes, "Local memory per thread, bytes.")
      .def_ro("const_size_bytes", &KernelAttributes::const_size_bytes, "Constant memory used, bytes.")
      .def_ro("ptx_version", &KernelAttributes::ptx_version, "PTX virtual architecture, major*10 + minor.")
      .def_ro("binary_version", &KernelAttributes::binary_version, "Binary architecture, major*10 + minor.")
      .def_ro("preferred_shared_memory_carveout", &KernelAttributes::preferred_shared_memory_carveout, "Preferred shared-memory share of L1, percent.")
      .def_ro("max_shared_memory_per_block_optin",
              &KernelAttributes::max_shared_memory_per_block_optin, "Shared memory a block may opt in to, bytes.");

  nb::class_<Occupancy>(m, "KernelOccupancy", "Occupancy calculator for one kernel.")
      .def("max_active_blocks_per_multiprocessor",
           [](const Occupancy& o, int block_size, size_t smem, nb::object device) {
             return o.kernel.max_active_blocks_per_multiprocessor(block_size, smem, to_device(device));
           },
           nb::arg("block_size"), nb::kw_only(), nb::arg("dynamic_shared_memory") = 0,
           nb::arg("device") = nb::none(), "Blocks of block_size threads resident per SM at once.")
      .def("max_potential_block_size",
           [](const Occupancy& o, size_t smem, int limit, nb::object device) {
             return o.kernel.max_potential_block_size(smem, limit, to_device(device));
           },
           nb::kw_only(), nb::arg("dynamic_shared_memory") = 0, nb::arg("block_size_limit") = 0,
           nb::arg("device") = nb::none(), "(min_grid_size, block_size) for full occupancy.")
      .def("max_active_clusters",
           [](const Occupancy& o, nb::object grid, nb::object block, nb::object cluster,
              size_t smem, nb::object device) {
             return o.kernel.max_active_clusters(to_dim3(grid), to_dim3(block), to_dim3(cluster),
                                                 smem, to_device(device));
           },
           nb::arg("grid"), nb::arg("block"), nb::arg("cluster"), nb::kw_only(),
           nb::arg("dynamic_shared_memory") = 0, nb::arg("device") = nb::none(),
           "Clusters of this shape that can be co-resident on the device.");

  nb::class_<Kernel>(m, "Kernel", "A kernel in loaded code; keeps its library loaded.")
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
      .def_prop_ro("attributes", [](const Kernel& k) { return k.attributes(Device(0)); },
                   "KernelAttributes on device 0 (get_attributes(device) for others).")
      .def("get_attributes", [](const Kernel& k, nb::object d) { return k.attributes(to_device(d)); },
           nb::arg("device") = nb::none(), "KernelAttributes on `device` (default: device 0).")
      .def_prop_ro("occupancy", [](const Kernel& k) { return Occupancy{k}; },
                   "KernelOccupancy: occupancy queries for this kernel.")
      .def("set_max_dynamic_shared_memory",
           [](const Kernel& k, int bytes, nb::object d) { k.set_max_dynamic_shared_memory(bytes, to_device(d)); },
           nb::arg("bytes"), nb::kw_only(), nb::arg("device") = nb::none(),
           "Allow launches with up to `bytes` of dynamic shared memory (above 48 KiB needs this).")
      .def("set_preferred_shared_memory_carveout",
           [](const Kernel& k, int percent, nb::object d) {
             k.set_preferred_shared_memory_carveout(percent, to_device(d));
           },
           nb::arg("percent"), nb::kw_only(), nb::arg("device") = nb::none(),
           "Preferred shared-memory share of L1/shared, 0-100 percent (a hint).")
      .def("__repr__", [](const Kernel& k) { return "<nanocuda." + k.describe() + ">"; });

  nb::class_<ObjectCode>(m, "ObjectCode", "Compiled device code: cubin, fatbin, PTX or LTO-IR.")
      .def_static("from_cubin", [](nb::object d) { return to_object_code(CodeType::cubin, d); }, nb::arg("data"),
                  "From bytes, or a path to read.")
      .def_static("from_fatbin", [](nb::object d) { return to_object_code(CodeType::fatbin, d); }, nb::arg("data"),
                  "From bytes, or a path to read.")
      .def_static("from_ptx", [](nb::object d) {
                    if (nb::isinstance<nb::str>(d)) {
                      std::string text = nb::borrow<nb::str>(d).c_str();
                      if (text.find(".version") != std::string::npos)
                        return ObjectCode::from_ptx(std::move(text));  // PTX text, not a path
                    }
                    return to_object_code(CodeType::ptx, d);
                  }, nb::arg("data"), "From PTX text (str), bytes, or a path to read.")
      .def_static("from_ltoir", [](nb::object d) { return to_object_code(CodeType::ltoir, d); }, nb::arg("data"),
                  "From bytes, or a path to read.")
      .def_prop_ro("code", [](const ObjectCode& o) { return nb::bytes(o.bytes().data(), o.bytes().size()); },
                   "The image's bytes (PTX as text bytes).")
      .def_prop_ro("code_type", [](const ObjectCode& o) { return std::string(code_type_name(o.type())); },
                   "'cubin', 'fatbin', 'ptx' or 'ltoir'.")
      .def_prop_ro("name", &ObjectCode::name, "The name it was compiled or loaded under.")
      .def_prop_ro("lowered_names", &ObjectCode::lowered_names, "{name expression: lowered name}.")
      .def_prop_ro("kernel_names", [](const ObjectCode& o) { return o.library()->kernel_names(); },
                   "Every kernel in the loaded code (loads it).")
      .def("get_kernel", &ObjectCode::get_kernel, nb::arg("name"),
           "By name expression, extern \"C\" name or mangled name.")
      .def("__len__", [](const ObjectCode& o) { return o.bytes().size(); })
      .def("__repr__", [](const ObjectCode& o) {
        return "<nanocuda.ObjectCode " + std::string(code_type_name(o.type())) + " " +
               std::to_string(o.bytes().size()) + " bytes" + (o.name().empty() ? "" : " from " + o.name()) + ">";
      });

  nb::class_<Program>(m, "Program", "CUDA C++ source compiled with NVRTC (cached).")
      .def("__init__",
           [](Program* self, std::string source, nb::object options, std::string name) {
             ProgramOptions opts = options.is_none() ? ProgramOptions{} : nb::cast<ProgramOptions>(options);
             new (self) Program(std::move(source), std::move(opts), std::move(name));
           },
           nb::arg("source"), nb::arg("options") = nb::none(), nb::kw_only(),
           nb::arg("name") = "kernel.cu")
      .def_static("from_file",
                  [](nb::object path, nb::object options) {
                    ProgramOptions opts = options.is_none() ? ProgramOptions{} : nb::cast<ProgramOptions>(options);
                    return Program::from_file(fspath(path), std::move(opts));
                  },
                  nb::arg("path"), nb::arg("options") = nb::none(),
                  "A Program of a .cu file: its folder is on the include path.")
      .def_prop_ro("source", &Program::source, "The CUDA C++ source text.")
      .def_prop_ro("name", &Program::name, "The file name NVRTC reports in messages.")
      .def_prop_ro("options", &Program::options, "The ProgramOptions it compiles with.")
      .def("compile",
           [](const Program& p, const std::string& target, std::vector<std::string> exprs) {
             return p.compile(parse_code_type(target), exprs);
           },
           nb::arg("target") = "cubin", nb::kw_only(),
           nb::arg("name_expressions") = std::vector<std::string>{},
           nb::call_guard<nb::gil_scoped_release>(),
           "Compile to 'cubin', 'ptx' or 'ltoir'; raises CompileError with the log on failure.")
      .def("flags", [](const Program& p, const std::string& target) { return p.flags(parse_code_type(target)); },
           nb::arg("target") = "cubin", "The NVRTC flags compile(target) uses.");

  m.def("link",
        [](std::vector<ObjectCode> objects, std::string arch, bool lto, bool debug, bool lineinfo,
           std::vector<std::string> extra) {
          return link(objects, LinkerOptions{std::move(arch), debug, lineinfo, lto, std::move(extra)});
        },
        nb::arg("objects"), nb::kw_only(), nb::arg("arch") = "", nb::arg("lto") = false,
        nb::arg("debug") = false, nb::arg("lineinfo") = false,
        nb::arg("extra_flags") = std::vector<std::string>{}, nb::call_guard<nb::gil_scoped_release>(),
        "Link objects (PTX, LTO-IR, cubin, fatbin) into one cubin ObjectCode with nvJitLink.");
  m.def("nvrtc_version", &Program::nvrtc_version, "NVRTC's version as major*1000 + minor*10 (loads NVRTC).");
  m.def("nvrtc_library", &Program::nvrtc_path, "The NVRTC library file in use (loads NVRTC).");
  m.def("compile_cache_dir", &CompileCache::directory, "Where compiled code is cached on disk.");
  m.def("compile_cache_enabled", &CompileCache::enabled,
        "Whether compiled code is cached on disk (NANOCUDA_CACHE=0 turns it off).");
  m.def("clear_memory_cache", &CompileCache::clear_memory,
        "Forget in-process compile results (the disk cache stays).");
  internal_module(m).def("set_device_include_dir", &detail::set_device_include_dir, nb::arg("dir"),
        "Where nanocuda's kernel-side headers are (set by the package at import).");
  m.def("add_library_search_dirs", &detail::add_library_search_dirs, nb::arg("dirs"),
        "Extra folders searched for libnvrtc.so / libnvJitLink.so (after the toolkit).");
  // Where run-time compilation's pieces come from, for `nanocuda info` (nanocuda._compile).
  internal_module(m).def("add_include_search_dirs", &detail::add_include_search_dirs, nb::arg("dirs"),
        "Extra folders searched for cuda.h and cccl/cuda/std (after the toolkit).");
  internal_module(m).def("nvjitlink_library", [] { return detail::nvjitlink().path; },
        "The nvJitLink library file in use (loads nvJitLink).");
  internal_module(m).def("local_includes",
        [](const std::string& source, const std::string& source_dir,
           const std::vector<std::string>& search) {
          std::vector<std::string> paths;
          for (const auto& inc : scan_local_includes(source, source_dir, search))
            if (!inc.path.empty()) paths.push_back(inc.path);
          return paths;
        }, nb::arg("source"), nb::arg("source_dir"), nb::arg("include_dirs"),
        "The files of `source`'s quoted includes, transitively: what the compile cache key "
        "reads, so nanocuda.load() watches exactly those.");
  internal_module(m).def("cuda_include_dirs", [] {
    const auto& api = detail::nvrtc();
    return std::make_pair(api.include, api.cccl_include);
  }, "(folder of cuda.h, folder of cuda/std) paired with the loaded NVRTC; '' if none.");
}

}  // namespace nanocuda::py
