// Python bindings for runtime compilation: module functions (link, NVRTC and cache queries); the classes are in bind_program/bind_kernel.
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "compile/compile_bindings.h"
#include "nanocuda/compile/local_includes.h"
#include "nanocuda/compile/cache_trust.h"
#include "nanocuda/compile/compile_cache.h"
#include "nanocuda/compile/library_search.h"
#include "nanocuda/compile/nvrtc_api.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/compile/library.h"
#include "nanocuda/compile/linker.h"
#include "nanocuda/compile/program.h"

namespace nb = nanobind;

namespace nanocuda::py {

Device to_device(const nb::handle& device) {
  return Device(device.is_none() ? 0 : nb::cast<int>(device.attr("__index__")()));
}

std::string fspath(const nb::handle& path) {
  nb::str text = nb::str(nb::module_::import_("os").attr("fspath")(path));
  return std::string(text.c_str());
}

void bind_compile(nb::module_& m) {
  bind_kernel(m);
  bind_program(m);
  m.def("link",
        [](std::vector<ObjectCode> objects, std::string arch, bool lto, bool debug, bool lineinfo,
           std::vector<std::string> extra) {
          LinkerOptions options;
          options.arch = std::move(arch);
          options.debug = debug;
          options.lineinfo = lineinfo;
          options.lto = lto;
          options.extra_flags = std::move(extra);
          return link(objects, std::move(options));
        },
        nb::arg("objects"), nb::kw_only(), nb::arg("arch") = "", nb::arg("lto") = false,
        nb::arg("debug") = false, nb::arg("lineinfo") = false,
        nb::arg("extra_flags") = std::vector<std::string>{}, nb::call_guard<nb::gil_scoped_release>(),
        "Link objects (PTX, LTO-IR, cubin, fatbin) into one cubin ObjectCode with nvJitLink.");
  m.def("nvrtc_version", &Program::nvrtc_version, "NVRTC's version as major*1000 + minor*10 (loads NVRTC).");
  m.def("nvrtc_library", &Program::nvrtc_path, "The NVRTC library file in use (loads NVRTC).");
  m.def("compile_cache_dir", &CompileCache::directory,
        "Where compiled code is cached on disk (\"\" when there is no home folder: no disk cache).");
  internal_module(m).def("cache_trust_problem", [](const std::string& path) { return cache_trust_problem(path); }, nb::arg("path"),
        "Why code must not be loaded from `path` (another owner, group/other-writable, a link), "
        "\"\" when it may (the compile cache's rule, for the torch bridge's library).");
  m.def("compile_cache_enabled", &CompileCache::enabled,
        "Whether compiled code is cached on disk (NANOCUDA_CACHE=0 turns it off).");
  m.def("clear_memory_cache", &CompileCache::clear_memory,
        "Forget in-process compile results (the disk cache stays).");
  m.def("compile_cache_info", [] {
          CompileCacheInfo i = CompileCache::info();
          nb::dict d;
          d["directory"] = i.directory;
          d["enabled"] = i.enabled;
          d["disk_entries"] = i.disk_entries;
          d["disk_bytes"] = i.disk_bytes;
          d["disk_max_bytes"] = i.disk_max_bytes;
          d["memory_entries"] = i.memory_entries;
          d["memory_bytes"] = i.memory_bytes;
          d["memory_max_bytes"] = i.memory_max_bytes;
          d["evicted"] = i.evicted;
          d["rejected"] = i.rejected;
          d["last_error"] = i.last_error;
          return d;
        },
        "The compile cache's state: directory, enabled, disk_entries/disk_bytes/"
        "disk_max_bytes (NANOCUDA_CACHE_MAX_BYTES, default 256 MiB, 0 = no limit), "
        "memory_entries/memory_bytes/memory_max_bytes, this process's evicted and "
        "rejected (corrupt) disk entries, and last_error: the last disk error it met "
        "(\"\" if none; the cache never fails a compile).");
  internal_module(m).def("set_device_include_dir", &detail::set_device_include_dir, nb::arg("dir"),
        "Where nanocuda's kernel-side headers are (set by the package at import).");
  m.def("add_library_search_dirs", &detail::add_library_search_dirs, nb::arg("dirs"),
        "Extra folders searched for libnvrtc.so / libnvJitLink.so (after the toolkit).");
  // Where run-time compilation's pieces come from, for `nanocuda info` (nanocuda._compile).
  internal_module(m).def("add_include_search_dirs", &detail::add_include_search_dirs, nb::arg("dirs"),
        "Extra folders searched for cuda.h and cccl/cuda/std (after the toolkit).");
  internal_module(m).def("nvvm_library", [] { return detail::nvvm().path; },
        "The libNVVM library file in use (loads libNVVM; Program(code_type='nvvm') needs it).");
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
