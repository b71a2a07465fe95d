// Program: NVRTC flags, the cache key (with local #include contents), compile and log.
#include "nanocuda/compile/program.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nanocuda/compile/compile_cache.h"
#include "nanocuda/compile/compile_error.h"
#include "nanocuda/compile/library_search.h"
#include "nanocuda/compile/linker.h"
#include "nanocuda/compile/local_includes.h"
#include "nanocuda/compile/nvrtc_api.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {

// NVRTC ships no C library headers, but cuda.h includes <stdlib.h> and <stdint.h>. These
// in-memory stand-ins give it what it uses (size_t is built in; the fixed-width types come
// from CCCL, which defines them globally under NVRTC).
constexpr const char* kStdlibShim = "#pragma once\n";
constexpr const char* kStdintShim = "#pragma once\n#include <cuda/std/cstdint>\n";
constexpr const char* kStdintShimNoCccl =
    "#pragma once\n"
    "typedef signed char int8_t; typedef short int16_t; typedef int int32_t;\n"
    "typedef long long int64_t; typedef unsigned char uint8_t; typedef unsigned short uint16_t;\n"
    "typedef unsigned int uint32_t; typedef unsigned long long uint64_t;\n"
    "typedef long long intptr_t; typedef unsigned long long uintptr_t;\n";

bool read_file(const std::string& path, std::string& out) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return false;  // ifstream opens folders as empty
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream buf;
  buf << in.rdbuf();
  out = buf.str();
  return true;
}

std::string dirname_of(const std::string& path) {
  return std::filesystem::path(path).parent_path().string();
}

void put_u32(std::string& out, std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
bool get_u32(const std::string& in, size_t& pos, std::uint32_t& v) {
  if (pos + 4 > in.size()) return false;
  std::memcpy(&v, in.data() + pos, 4);
  pos += 4;
  return true;
}
bool get_str(const std::string& in, size_t& pos, std::string& s) {
  std::uint32_t n = 0;
  if (!get_u32(in, pos, n) || pos + n > in.size()) return false;
  s.assign(in, pos, n);
  pos += n;
  return true;
}

// Payload: code, then (expression, lowered name) pairs, then the compile log.
std::string serialize(const std::string& code, const std::map<std::string, std::string>& names,
                      const std::string& log) {
  std::string out;
  put_u32(out, static_cast<std::uint32_t>(code.size()));
  out += code;
  put_u32(out, static_cast<std::uint32_t>(names.size()));
  for (const auto& [k, v] : names) {
    put_u32(out, static_cast<std::uint32_t>(k.size()));
    out += k;
    put_u32(out, static_cast<std::uint32_t>(v.size()));
    out += v;
  }
  put_u32(out, static_cast<std::uint32_t>(log.size()));
  out += log;
  return out;
}

bool deserialize(const std::string& in, std::string& code, std::map<std::string, std::string>& names,
                 std::string& log) {
  size_t pos = 0;
  std::uint32_t count = 0;
  if (!get_str(in, pos, code) || !get_u32(in, pos, count)) return false;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::string k, v;
    if (!get_str(in, pos, k) || !get_str(in, pos, v)) return false;
    names.emplace(std::move(k), std::move(v));
  }
  // Entries written before the log was kept end here.
  if (pos < in.size() && !get_str(in, pos, log)) return false;
  return pos == in.size();
}

std::string program_log(const detail::NvrtcApi& api, nvrtcProgram prog) {
  size_t size = 0;
  if (api.nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  api.nvrtcGetProgramLog(prog, log.data());
  log.resize(size - 1);
  return log;
}

}  // namespace

Program::Program(std::string source, ProgramOptions options, std::string name)
    : Program(std::move(source), SourceType::cxx, std::move(options), std::move(name)) {}

Program::Program(std::string source, SourceType type, ProgramOptions options, std::string name)
    : source_(std::move(source)), options_(std::move(options)), name_(std::move(name)), type_(type) {
  options_.validate();
  if (name_.empty()) name_ = options_.name.empty() ? "kernel.cu" : options_.name;
  if (name_.find('/') != std::string::npos) source_dir_ = dirname_of(name_);
  // NVRTC and nvJitLink read text sources as C strings: a NUL byte would silently end the
  // source there. (NVVM IR may be bitcode, which holds NUL bytes.)
  if (type_ != SourceType::nvvm) {
    if (std::size_t nul = source_.find('\0'); nul != std::string::npos) {
      auto end = source_.begin() + static_cast<std::ptrdiff_t>(nul);
      auto line = 1 + std::count(source_.begin(), end, '\n');
      throw ValueError("Program: the " + std::string(source_type_name(type_)) + " source " + name_ +
                       " holds a NUL byte at offset " + std::to_string(nul) + " (line " + std::to_string(line) +
                       "); the compiler would stop reading there. Remove it (sources are text)");
    }
  }
}

const char* Program::backend() const noexcept {
  switch (type_) {
    case SourceType::ptx: return "nvJitLink";
    case SourceType::nvvm: return "NVVM";
    default: return "NVRTC";
  }
}

// What each source type compiles to, for the error message.
static const char* targets_of(SourceType type) {
  switch (type) {
    case SourceType::ptx: return "'cubin'";
    case SourceType::nvvm: return "'ptx', 'cubin' or 'ltoir'";
    default: return "'ptx', 'cubin' or 'ltoir'";
  }
}

static void check_target(SourceType type, CodeType target) {
  bool ok = type == SourceType::ptx
                ? target == CodeType::cubin
                : target == CodeType::cubin || target == CodeType::ptx || target == CodeType::ltoir;
  if (!ok)
    throw ValueError("Program::compile", std::string("target_type '") + code_type_name(target) +
                     "' is not supported for code_type '" + source_type_name(type) +
                     "': expected " + targets_of(type));
}

Program Program::from_file(const std::string& path, ProgramOptions options) {
  std::string text;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ValueError("Program::from_file", path + " is a folder, not a source file");
  if (!read_file(path, text))
    throw ValueError("Program::from_file", "cannot read " + path + ": " + std::strerror(errno));
  return Program(std::move(text), std::move(options), path);
}

std::string Program::nvrtc_path() { return detail::nvrtc().path; }
int Program::nvrtc_version() { return detail::nvrtc().version; }

// The LinkerOptions a PTX program links with: ProgramOptions' arch, debug info and the
// options nvJitLink shares with NVRTC.
static LinkerOptions linker_options_of(const ProgramOptions& o) {
  LinkerOptions l;
  l.arch = o.arch;
  l.debug = o.debug;
  l.lineinfo = o.lineinfo;
  l.name = o.name;
  if (o.max_registers > 0) l.set("max_register_count", static_cast<long long>(o.max_registers));
  for (const char* shared : {"ftz", "prec_div", "prec_sqrt", "fma", "ptxas_options", "split_compile", "no_cache"})
    if (const OptionValue* v = o.get(shared)) l.set(shared, *v);
  if (const OptionValue* v = o.get("link_time_optimization"); v && std::get_if<bool>(v))
    l.lto = std::get<bool>(*v);
  // NVRTC's time takes a file; nvJitLink's -time only logs: any value turns it on, as in cuda.core.
  if (const OptionValue* v = o.get("time"); v && !(std::get_if<bool>(v) && !std::get<bool>(*v)))
    l.set("time", true);
  return l;
}

std::vector<std::string> Program::flags(CodeType target) const {
  check_target(type_, target);
  options_.validate();  // fields may have been assigned after construction
  if (type_ == SourceType::ptx) return linker_options_of(options_).flags(target);
  if (type_ == SourceType::nvvm) return nvvm_flags(target);
  const auto& api = detail::nvrtc();
  const ProgramOptions& o = options_;
  const std::string arch = o.resolved_arch(target != CodeType::cubin);
  std::vector<std::string> f;
  f.push_back((target == CodeType::ptx ? "-arch=compute_" : "-arch=sm_") + arch);
  bool lto_flag = false;
  if (const OptionValue* v = o.get("link_time_optimization"); v && std::get_if<bool>(v))
    lto_flag = std::get<bool>(*v);
  if (target == CodeType::ltoir && !lto_flag) f.push_back("-dlto");
  if (!o.std.empty()) f.push_back("-std=" + o.std);
  if (o.default_device) f.push_back("-default-device");
  if (o.fast_math) f.push_back("--use_fast_math");
  if (o.lineinfo) f.push_back("-lineinfo");
  if (o.debug) f.push_back("-G");
  if (o.max_registers > 0) f.push_back("--maxrregcount=" + std::to_string(o.max_registers));
  if (o.relocatable_device_code) f.push_back("-rdc=true");
  for (const auto& d : o.defines) f.push_back("-D" + d);
  for (auto& x : o.named_flags()) f.push_back(std::move(x));
  const OptionValue* no_source_include = o.get("no_source_include");
  bool skip_source_dir = no_source_include && std::get_if<bool>(no_source_include) &&
                         std::get<bool>(*no_source_include);
  if (!source_dir_.empty() && !skip_source_dir) f.push_back("-I" + source_dir_);
  for (const auto& d : o.include_dirs) f.push_back("-I" + d);
  // nanocuda's kernel-side headers (tma.cuh), so CUtensorMap needs no user effort.
  if (std::string dir = detail::device_include_dir(); !dir.empty()) f.push_back("-I" + dir);
  // The toolkit's headers last, so user folders can override them.
  if (!api.include.empty()) f.push_back("-I" + api.include);
  if (!api.cccl_include.empty()) f.push_back("-I" + api.cccl_include);
  // NVIDIA's header packages may sit in another site-packages than cuda.h's (user site vs
  // system): crt/ (nvidia-cuda-crt) and the rest are found through every wheel include folder.
  // Only those of NVRTC's CUDA major (both majors' packages may be installed).
  for (const auto& d : detail::include_search_dirs_extra())
    if (d != api.include && d + "/cccl" != api.cccl_include && detail::include_dir_fits(d, api.version / 1000))
      f.push_back("-I" + d);
  for (const auto& x : o.extra_flags) f.push_back(x);
  return f;
}

ObjectCode Program::compile(CodeType target, const std::vector<std::string>& name_expressions) const {
  check_target(type_, target);
  if (type_ != SourceType::cxx && !name_expressions.empty())
    throw ValueError("Program::compile", std::string("name_expressions need code_type 'c++', not '") +
                     source_type_name(type_) + "'");
  if (type_ == SourceType::ptx) {
    LinkerOptions lo = linker_options_of(options_);
    lo.name = name_;
    return link({ObjectCode::from_bytes(CodeType::ptx, source_, name_)}, std::move(lo), target);
  }
  if (type_ == SourceType::nvvm) return compile_nvvm(target);
  return compile_cxx(target, name_expressions);
}

std::string Program::cache_key(CodeType target, const std::vector<std::string>& name_expressions) const {
  if (type_ != SourceType::cxx)
    throw ValueError("Program::cache_key", std::string("only C++ compiles are cached; code_type '") +
                     source_type_name(type_) + "' has no cache key");
  check_target(type_, target);
  return cache_key_for(target, flags(target), name_expressions);
}

std::string Program::cache_key_for(CodeType target, const std::vector<std::string>& f,
                                   const std::vector<std::string>& name_expressions) const {
  const auto& api = detail::nvrtc();
  std::string key = "nanocuda-compile v1\nnvrtc " + std::to_string(api.version) + " " + api.path +
                    "\ntarget " + code_type_name(target) + "\nname " + name_ + "\n";
  for (const auto& x : f) key += "flag " + x + "\n";
  for (const auto& e : name_expressions) key += "expr " + e + "\n";
  key += "source " + std::to_string(source_.size()) + "\n" + source_;
  // Quoted includes by content, so editing a local header invalidates the cache; angle
  // brackets are the toolkit's (covered by the NVRTC version) or the system's.
  for (const auto& inc : scan_local_includes(source_, source_dir_, options_.include_dirs)) {
    if (inc.path.empty()) key += "\n#missing " + inc.name;
    else key += "\n#file " + inc.path + " " + std::to_string(inc.contents.size()) + "\n" + inc.contents;
  }
  return key;
}

ObjectCode Program::compile_cxx(CodeType target, const std::vector<std::string>& name_expressions) const {
  const auto& api = detail::nvrtc();
  const std::vector<std::string> f = flags(target);
  // A malformed NANOCUDA_CACHE_MAX_BYTES is an error here, not a limit silently ignored.
  if (CompileCache::enabled()) (void)CompileCache::max_disk_bytes();
  const std::string key = cache_key_for(target, f, name_expressions);
  if (auto payload = CompileCache::load(key)) {
    std::string code;
    std::map<std::string, std::string> names;
    std::string log;
    if (deserialize(*payload, code, names, log))
      return ObjectCode::from_bytes(target, std::move(code), name_)
          .with_lowered_names(std::move(names))
          .with_arch(options_.resolved_arch(target != CodeType::cubin))
          .with_log(std::move(log))
          .with_compiler_version(api.version);
  }

  const bool has_cccl = !api.cccl_include.empty();
  const char* headers[] = {kStdlibShim, has_cccl ? kStdintShim : kStdintShimNoCccl};
  const char* header_names[] = {"stdlib.h", "stdint.h"};
  nvrtcProgram prog = nullptr;
  nvrtcResult rc = api.nvrtcCreateProgram(&prog, source_.c_str(), name_.c_str(), 2, headers,
                                          header_names);
  if (rc != NVRTC_SUCCESS)
    throw CompileError(std::string("nvrtcCreateProgram failed: ") + api.nvrtcGetErrorString(rc), f, name_);
  struct Guard {
    const detail::NvrtcApi& api;
    nvrtcProgram& prog;
    ~Guard() { api.nvrtcDestroyProgram(&prog); }
  } guard{api, prog};

  for (const auto& e : name_expressions) api.nvrtcAddNameExpression(prog, e.c_str());
  std::vector<const char*> argv;
  for (const auto& x : f) argv.push_back(x.c_str());
  rc = api.nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  if (rc != NVRTC_SUCCESS) {
    std::string log = program_log(api, prog);
    if (log.empty()) log = api.nvrtcGetErrorString(rc);
    // NVRTC ships no CUDA headers: say which package has them when none were found.
    if (log.find("cannot open source file") != std::string::npos) {
      if (api.include.empty())
        log += "\n(no cuda.h found next to NVRTC or in a toolkit: `pip install nvidia-cuda-runtime` "
               "provides cuda.h, cuda_fp16.h, cuda_bf16.h)";
      if (api.cccl_include.empty())
        log += "\n(no cuda/std headers found: `pip install nvidia-cuda-cccl` provides them)";
      if (log.find("\"crt/") != std::string::npos)
        log += "\n(crt/ headers are in `pip install nvidia-cuda-crt`)";
    }
    if (log.find("libnvrtc-builtins") != std::string::npos && !api.builtins_error.empty())
      log += "\n(nanocuda could not load NVRTC's builtins library: " + api.builtins_error + ")";
    throw CompileError(std::move(log), f, name_);
  }

  size_t size = 0;
  std::string code;
  nvrtcResult got = NVRTC_SUCCESS;
  switch (target) {
    case CodeType::ptx:
      api.nvrtcGetPTXSize(prog, &size);
      code.resize(size);
      got = api.nvrtcGetPTX(prog, code.data());
      while (!code.empty() && code.back() == '\0') code.pop_back();  // text, not a C string
      break;
    case CodeType::cubin:
      api.nvrtcGetCUBINSize(prog, &size);
      code.resize(size);
      got = api.nvrtcGetCUBIN(prog, code.data());
      break;
    default:
      api.nvrtcGetLTOIRSize(prog, &size);
      code.resize(size);
      got = api.nvrtcGetLTOIR(prog, code.data());
      break;
  }
  if (got != NVRTC_SUCCESS)
    throw CompileError(std::string("retrieving the output failed: ") + api.nvrtcGetErrorString(got),
                       f, name_);
  std::map<std::string, std::string> names;
  for (const auto& e : name_expressions) {
    const char* lowered = nullptr;
    if (api.nvrtcGetLoweredName(prog, e.c_str(), &lowered) == NVRTC_SUCCESS && lowered)
      names.emplace(e, lowered);
  }
  std::string log = program_log(api, prog);
  CompileCache::store(key, serialize(code, names, log));
  return ObjectCode::from_bytes(target, std::move(code), name_)
      .with_lowered_names(std::move(names))
      .with_arch(options_.resolved_arch(target != CodeType::cubin))
      .with_log(std::move(log))
      .with_compiler_version(api.version);
}

std::vector<std::string> backend_flags(const ProgramOptions& options, std::string_view backend,
                                       std::optional<CodeType> target) {
  SourceType type = SourceType::cxx;
  if (backend == "nvrtc" || backend == "NVRTC") type = SourceType::cxx;
  else if (backend == "nvjitlink" || backend == "nvJitLink") type = SourceType::ptx;
  else if (backend == "nvvm" || backend == "NVVM") type = SourceType::nvvm;
  else
    throw ValueError("nanocuda::backend_flags", "unknown backend '" + std::string(backend) +
                                                    "': expected 'nvrtc', 'nvjitlink' or 'nvvm'");
  const CodeType t = target ? *target : type == SourceType::nvvm ? CodeType::ptx : CodeType::cubin;
  return Program("", type, options).flags(t);
}

}  // namespace nanocuda
