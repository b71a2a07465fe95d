// The manifest beside an ahead-of-time fatbin (`nanocuda build`): what it was built from, and its kernels.
#pragma once

#include <string>
#include <vector>

#include "nanocuda/compile/cubin_info.h"
#include "nanocuda/compile/object_code.h"

namespace nanocuda {

// Written as JSON to `<stem>.fatbin.json` beside `<stem>.fatbin`:
//   {"format": "nanocuda-aot-1", "source": "gemm.cu", "source_hash": "fnv1a64:<16 hex>",
//    "options": ["defines=N=128", "std=c++17"], "nvrtc_version": 13000,
//    "targets": ["sm_80", "sm_90a", "compute_90"],
//    "kernels": [{"name": "scale", "params": [[0, 8], [8, 4]]}]}
// `options` are the compile options other than the architecture, "name=value", sorted; a
// fatbin is used only when they and the source hash match the load. Kernels and layouts
// come from the first cubin's ELF (empty when the fatbin holds PTX only).
struct AotManifest {
  static constexpr const char* format = "nanocuda-aot-1";
  std::string source;
  std::string source_hash;
  std::vector<std::string> options;
  int nvrtc_version = 0;
  std::vector<std::string> targets;
  std::vector<CubinKernel> kernels;

  [[nodiscard]] std::string to_json() const;
  // Throws ValueError naming `what` (the file) when the text is not such a manifest.
  [[nodiscard]] static AotManifest parse(const std::string& json, const std::string& what = "manifest");
};

// "fnv1a64:<16 hex>" of the source and every local (quoted) include it reaches, names and
// contents (the same scan as the compile cache key): a change detector, not a signature.
[[nodiscard]] std::string aot_source_hash(const std::string& source, const std::string& source_dir,
                                          const std::vector<std::string>& search);

// A fatbin and its manifest, read from `<stem>.fatbin` and `<stem>.fatbin.json`; no driver
// or compiler needed until a kernel is fetched from `code`.
struct PrebuiltModule {
  ObjectCode code;
  AotManifest manifest;

  [[nodiscard]] static PrebuiltModule open(const std::string& fatbin_path);
  // Whether the manifest was built from this source (and its local includes) with these options.
  [[nodiscard]] bool matches(const std::string& source, const std::string& source_dir,
                             const std::vector<std::string>& search,
                             const std::vector<std::string>& options) const;
  // The targets that can run on a device of compute capability `device_arch` (90).
  [[nodiscard]] std::vector<std::string> targets_for(int device_arch) const;
};

}  // namespace nanocuda
