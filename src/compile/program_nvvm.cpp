// Program for NVVM IR: cuda.core's options as libNVVM flags, and one libNVVM run per compile.
#include <cstdio>
#include <string>

#include "nanocuda/compile/compile_error.h"
#include "nanocuda/compile/linker.h"
#include "nanocuda/compile/nvrtc_api.h"
#include "nanocuda/compile/program.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {

bool flag_set(const ProgramOptions& o, const char* option) {
  const OptionValue* v = o.get(option);
  return v && std::get_if<bool>(v) && std::get<bool>(*v);
}

std::string nvvm_log(const detail::NvvmApi& api, nvvmProgram prog) {
  size_t size = 0;
  if (api.nvvmGetProgramLogSize(prog, &size) != NVVM_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  api.nvvmGetProgramLog(prog, log.data());
  log.resize(size - 1);
  return log;
}

}  // namespace

std::vector<std::string> Program::nvvm_flags(CodeType target) const {
  const ProgramOptions& o = options_;
  // Options libNVVM has no counterpart for are refused rather than silently dropped.
  static const char* const kNvvmNamed[] = {"device_code_optimize", "ftz", "prec_sqrt", "prec_div", "fma",
                                           "link_time_optimization", "extra_sources", "use_libdevice",
                                           "numba_debug"};
  for (const auto& n : o.named) {
    bool known = false;
    for (const char* k : kNvvmNamed) known = known || n.name == k;
    if (!known)
      throw ValueError("Program(code_type='nvvm'): option '" + n.name +
                       "' is for NVRTC; libNVVM takes arch, debug, lineinfo, device_code_optimize, "
                       "ftz, prec_sqrt, prec_div, fma, use_fast_math, link_time_optimization, "
                       "extra_sources, use_libdevice");
  }
  if (!o.defines.empty() || !o.include_dirs.empty())
    throw ValueError("Program(code_type='nvvm'): define_macro and include_path are for NVRTC");
  std::vector<std::string> f{"-arch=compute_" + o.resolved_arch(true)};
  if (o.debug) f.push_back("-g");
  if (o.lineinfo) f.push_back("-generate-line-info");
  if (o.fast_math) {
    for (const char* x : {"-ftz=1", "-prec-div=0", "-prec-sqrt=0", "-fma=1"}) f.push_back(x);
  }
  static const detail::OptionSpec kSpecs[] = {
      {"device_code_optimize", detail::OptionKind::one_zero, "-opt"},
      {"ftz", detail::OptionKind::one_zero, "-ftz"},
      {"prec_sqrt", detail::OptionKind::one_zero, "-prec-sqrt"},
      {"prec_div", detail::OptionKind::one_zero, "-prec-div"},
      {"fma", detail::OptionKind::one_zero, "-fma"},
  };
  for (const auto& spec : kSpecs)
    if (const OptionValue* v = o.get(spec.name)) {
      detail::append_flags("ProgramOptions", spec, *v, f);
      if (std::string(spec.name) == "device_code_optimize") f.back() = f.back() == "-opt=1" ? "-opt=3" : "-opt=0";
    }
  if (target == CodeType::ltoir || flag_set(o, "link_time_optimization")) f.push_back("-gen-lto");
  if (flag_set(o, "numba_debug")) f.push_back("-numba-debug");
  return f;
}

ObjectCode Program::compile_nvvm(CodeType target) const {
  const auto& api = detail::nvvm();
  // cubin is PTX from libNVVM linked by nvJitLink; ptx and ltoir come from libNVVM itself.
  const std::vector<std::string> f = nvvm_flags(target == CodeType::cubin ? CodeType::ptx : target);
  nvvmProgram prog = nullptr;
  if (nvvmResult rc = api.nvvmCreateProgram(&prog); rc != NVVM_SUCCESS)
    throw CompileError(std::string("nvvmCreateProgram failed: ") + api.nvvmGetErrorString(rc), f, name_);
  struct Guard {
    const detail::NvvmApi& api;
    nvvmProgram& prog;
    ~Guard() { api.nvvmDestroyProgram(&prog); }
  } guard{api, prog};
  auto check = [&](nvvmResult rc, const std::string& what) {
    if (rc == NVVM_SUCCESS) return;
    std::string log = nvvm_log(api, prog);
    throw CompileError(log.empty() ? what + ": " + api.nvvmGetErrorString(rc) : log, f, name_);
  };
  check(api.nvvmAddModuleToProgram(prog, source_.data(), source_.size(), name_.c_str()), "adding " + name_);
  if (const OptionValue* extra = options_.get("extra_sources")) {
    auto words = detail::as_words("ProgramOptions", "extra_sources", *extra);
    if (words.size() % 2 != 0)
      throw ValueError("ProgramOptions: extra_sources takes (name, source) pairs");
    for (size_t i = 0; i < words.size(); i += 2)
      check(api.nvvmAddModuleToProgram(prog, words[i + 1].data(), words[i + 1].size(), words[i].c_str()),
            "adding " + words[i]);
  }
  if (flag_set(options_, "use_libdevice")) {
    if (api.libdevice.empty())
      throw ToolkitNotFoundError("use_libdevice: libdevice.10.bc not found next to " + api.path +
                                 " (it ships in the toolkit's nvvm/libdevice and in `pip install nvidia-nvvm`)");
    std::string bc;
    if (FILE* file = std::fopen(api.libdevice.c_str(), "rb")) {
      char buf[1 << 16];
      for (size_t n; (n = std::fread(buf, 1, sizeof buf, file)) > 0;) bc.append(buf, n);
      std::fclose(file);
    }
    check(api.nvvmLazyAddModuleToProgram(prog, bc.data(), bc.size(), "libdevice"), "adding libdevice");
  }
  std::vector<const char*> argv;
  for (const auto& x : f) argv.push_back(x.c_str());
  check(api.nvvmCompileProgram(prog, static_cast<int>(argv.size()), argv.data()), "nvvmCompileProgram");
  size_t size = 0;
  check(api.nvvmGetCompiledResultSize(prog, &size), "nvvmGetCompiledResultSize");
  std::string out(size, '\0');
  check(api.nvvmGetCompiledResult(prog, out.data()), "nvvmGetCompiledResult");
  std::string log = nvvm_log(api, prog);
  if (target == CodeType::ltoir)
    return ObjectCode::from_bytes(CodeType::ltoir, std::move(out), name_).with_arch(options_.resolved_arch(true)).with_log(log);
  while (!out.empty() && out.back() == '\0') out.pop_back();
  ObjectCode ptx = ObjectCode::from_bytes(CodeType::ptx, std::move(out), name_).with_log(log);
  if (target == CodeType::ptx) return ptx.with_arch(options_.resolved_arch(true));
  LinkerOptions lo;
  lo.arch = options_.arch;
  lo.debug = options_.debug;
  lo.lineinfo = options_.lineinfo;
  lo.name = name_;
  return link({ptx}, lo).with_log(log);
}

}  // namespace nanocuda
