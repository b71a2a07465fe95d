// Linker: one nvJitLink session per link(), its handle owned for the session's scope.
#include "nanocuda/compile/linker.h"

#include "nanocuda/compile/compile_error.h"
#include "nanocuda/compile/nvrtc_api.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {

nvJitLinkInputType input_type(CodeType type) {
  switch (type) {
    case CodeType::cubin: return NVJITLINK_INPUT_CUBIN;
    case CodeType::ptx: return NVJITLINK_INPUT_PTX;
    case CodeType::ltoir: return NVJITLINK_INPUT_LTOIR;
    case CodeType::fatbin: return NVJITLINK_INPUT_FATBIN;
  }
  return NVJITLINK_INPUT_ANY;
}

std::string read_log(const detail::NvJitLinkApi& api, nvJitLinkHandle h) {
  std::string log;
  size_t size = 0;
  if (api.nvJitLinkGetErrorLogSize(h, &size) == NVJITLINK_SUCCESS && size > 1) {
    log.resize(size);
    api.nvJitLinkGetErrorLog(h, log.data());
    log.resize(size - 1);
  }
  if (api.nvJitLinkGetInfoLogSize(h, &size) == NVJITLINK_SUCCESS && size > 1) {
    std::string info(size, '\0');
    api.nvJitLinkGetInfoLog(h, info.data());
    info.resize(size - 1);
    log += (log.empty() ? "" : "\n") + info;
  }
  return log;
}

}  // namespace

Linker& Linker::add(const ObjectCode& object) {
  inputs_.push_back(object);
  return *this;
}

ObjectCode Linker::link() const {
  if (inputs_.empty()) throw ValueError("Linker::link: no inputs were added");
  const auto& api = detail::nvjitlink();
  LinkerOptions opts = options_;
  std::string arch = opts.arch.empty() ? ProgramOptions{}.resolved_arch() : normalize_arch(opts.arch);
  std::vector<std::string> flags{"-arch=sm_" + arch};
  bool lto = opts.lto;
  for (const auto& in : inputs_) lto = lto || in.type() == CodeType::ltoir;
  if (lto) flags.push_back("-lto");
  if (opts.debug) flags.push_back("-g");
  if (opts.lineinfo) flags.push_back("-lineinfo");
  for (const auto& f : opts.extra_flags) flags.push_back(f);
  std::vector<const char*> argv;
  for (const auto& f : flags) argv.push_back(f.c_str());

  nvJitLinkHandle h = nullptr;
  if (api.nvJitLinkCreate(&h, static_cast<uint32_t>(argv.size()), argv.data()) != NVJITLINK_SUCCESS)
    throw CompileError(h ? read_log(api, h) : "nvJitLinkCreate failed", flags, "link");
  // Destroys the session on every path out of here.
  struct Guard {
    const detail::NvJitLinkApi& api;
    nvJitLinkHandle& h;
    ~Guard() { if (h) api.nvJitLinkDestroy(&h); }
  } guard{api, h};

  std::map<std::string, std::string> names;
  for (const auto& in : inputs_) {
    const std::string& bytes = in.bytes();
    std::string label = in.name().empty() ? code_type_name(in.type()) : in.name();
    // PTX must be NUL-terminated for nvJitLink.
    std::string ptx;
    const std::string* data = &bytes;
    if (in.type() == CodeType::ptx && (bytes.empty() || bytes.back() != '\0')) {
      ptx = bytes + '\0';
      data = &ptx;
    }
    if (api.nvJitLinkAddData(h, input_type(in.type()), data->data(), data->size(),
                             label.c_str()) != NVJITLINK_SUCCESS)
      throw CompileError(read_log(api, h), flags, "link input " + label);
    for (const auto& kv : in.lowered_names()) names.insert(kv);
  }
  if (api.nvJitLinkComplete(h) != NVJITLINK_SUCCESS) throw CompileError(read_log(api, h), flags, "link");
  size_t size = 0;
  api.nvJitLinkGetLinkedCubinSize(h, &size);
  std::string cubin(size, '\0');
  if (api.nvJitLinkGetLinkedCubin(h, cubin.data()) != NVJITLINK_SUCCESS)
    throw CompileError(read_log(api, h), flags, "link");
  return ObjectCode::from_cubin(std::move(cubin)).with_lowered_names(std::move(names)).with_arch(arch);
}

ObjectCode link(const std::vector<ObjectCode>& objects, LinkerOptions options) {
  Linker linker(std::move(options));
  for (const auto& o : objects) linker.add(o);
  return linker.link();
}

}  // namespace nanocuda
