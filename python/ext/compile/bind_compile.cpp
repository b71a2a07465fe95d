// Python bindings for runtime compilation: module functions (link, NVRTC and cache queries); the classes are in bind_program/bind_kernel.
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "compile/compile_bindings.h"
#include "core/py_device.h"
#include "nanocuda/compile/aot_manifest.h"
#include "nanocuda/compile/cubin_info.h"
#include "nanocuda/compile/fatbin.h"
#include "nanocuda/compile/local_includes.h"
#include "nanocuda/compile/cache_trust.h"
#include <nanobind/stl/tuple.h>
#include "nanocuda/compile/compile_cache.h"
#include "nanocuda/compile/library_search.h"
#include "nanocuda/compile/search_paths.h"
#include "nanocuda/compile/nvrtc_api.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/compile/library.h"
#include "nanocuda/compile/linker.h"
#include "nanocuda/compile/program.h"

namespace nb = nanobind;

namespace nanocuda::py {

Device to_device(const nb::handle& device, const char* call) {
  return device.is_none() ? Device() : Device(device_ordinal_arg(device, call));
}

std::string fspath(const nb::handle& path) {
  nb::str text = nb::str(nb::module_::import_("os").attr("fspath")(path));
  return std::string(text.c_str());
}

namespace {

std::string as_string(const nb::bytes& b) { return std::string(b.c_str(), b.size()); }
nb::bytes as_bytes(const std::string& s) { return nb::bytes(s.data(), s.size()); }

using Layout = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
std::vector<std::pair<std::string, Layout>> kernel_rows(const std::vector<CubinKernel>& kernels) {
  std::vector<std::pair<std::string, Layout>> out;
  for (const auto& k : kernels) {
    Layout layout;
    for (const auto& p : k.layout.params) layout.emplace_back(p.offset, p.size);
    out.emplace_back(k.name, std::move(layout));
  }
  return out;
}

nb::dict manifest_dict(const AotManifest& m) {
  nb::dict d;
  d["source"] = m.source;
  d["source_hash"] = m.source_hash;
  d["options"] = m.options;
  d["nvrtc_version"] = m.nvrtc_version;
  d["targets"] = m.targets;
  d["kernels"] = kernel_rows(m.kernels);
  return d;
}

// The ahead-of-time pieces (`nanocuda build`, prebuilt loads): fatbin, cubin reader, manifest.
void bind_aot(nb::module_ internal) {
  internal.def("make_fatbin", [](const std::vector<std::pair<std::string, nb::bytes>>& images) {
    std::vector<FatbinEntry> entries;
    for (const auto& [target, bytes] : images) {
      FatbinEntry e = fatbin_target(target);
      e.bytes = as_string(bytes);
      entries.push_back(std::move(e));
    }
    return as_bytes(make_fatbin(entries));
  }, nb::arg("images"), "A fatbin holding (target, bytes) images: 'sm_90a' cubins, 'compute_90' PTX.");
  internal.def("fatbin_entries", [](const nb::bytes& fatbin) {
    std::vector<std::pair<std::string, nb::bytes>> out;
    for (const auto& e : fatbin_entries(std::string_view(fatbin.c_str(), fatbin.size())))
      out.emplace_back(e.arch_name(), as_bytes(e.bytes));
    return out;
  }, nb::arg("fatbin"), "(target, bytes) of each image in a fatbin (bytes empty when compressed).");
  internal.def("fatbin_target_fits", [](const std::string& target, int device_arch) {
    return fatbin_target(target).fits(device_arch);
  }, nb::arg("target"), nb::arg("device_arch"),
     "Whether a fatbin image for `target` runs on a device of compute capability `device_arch` (90).");
  internal.def("cubin_kernels", [](const nb::bytes& cubin) {
    return kernel_rows(cubin_kernels(std::string_view(cubin.c_str(), cubin.size())));
  }, nb::arg("cubin"), "(name, [(offset, size), ...]) of each kernel in a cubin, read from its ELF.");
  internal.def("aot_source_hash", &aot_source_hash, nb::arg("source"), nb::arg("source_dir"),
               nb::arg("include_dirs"), "The manifest's hash of a source and its local includes.");
  internal.def("aot_manifest_json",
      [](const std::string& source, const std::string& source_hash, const std::vector<std::string>& options,
         int nvrtc_version, const std::vector<std::string>& targets, const nb::bytes& cubin) {
        AotManifest m{source, source_hash, options, nvrtc_version, targets, {}};
        if (cubin.size()) m.kernels = cubin_kernels(std::string_view(cubin.c_str(), cubin.size()));
        return m.to_json();
      }, nb::arg("source"), nb::arg("source_hash"), nb::arg("options"), nb::arg("nvrtc_version"),
      nb::arg("targets"), nb::arg("cubin"),
      "The manifest's JSON text; kernels are read from `cubin` (b'' for none).");
  internal.def("open_prebuilt", [](const std::string& fatbin_path) {
    auto p = PrebuiltModule::open(fatbin_path);
    return std::make_pair(p.code, manifest_dict(p.manifest));
  }, nb::arg("fatbin_path"), "(ObjectCode, manifest dict) of `<stem>.fatbin` and `<stem>.fatbin.json`.");
}

}  // namespace

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
  m.def("add_library_search_dirs", &add_library_search_dirs, nb::arg("dirs"),
        "Extra folders searched for libnvrtc.so / libnvJitLink.so (after the toolkit).");
  // Where run-time compilation's pieces come from, for `nanocuda info` (nanocuda._compile).
  internal_module(m).def("add_include_search_dirs", &detail::add_include_search_dirs, nb::arg("dirs"),
        "Extra folders searched for cuda.h and cccl/cuda/std (after the toolkit).");
  internal_module(m).def("nvvm_library", [] { return detail::nvvm().path; },
        "The libNVVM library file in use (loads libNVVM; Program(code_type='nvvm') needs it).");
  internal_module(m).def("nvjitlink_library", [] { return detail::nvjitlink().path; },
        "The nvJitLink library file in use (loads nvJitLink).");
  internal_module(m).def("cubin_kernel_names",
        [](nb::bytes cubin) { return cubin_kernel_names(std::string_view(cubin.c_str(), cubin.size())); },
        nb::arg("cubin"), "The kernels in a cubin, from its ELF symbol table (no driver).");
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
  bind_aot(internal_module(m));
}

}  // namespace nanocuda::py
