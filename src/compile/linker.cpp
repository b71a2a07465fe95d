// Linker: cuda.core's option names as nvJitLink flags, and the nvJitLink session each link() completes.
#include "nanocuda/compile/linker.h"

#include <array>

#include "nanocuda/compile/compile_error.h"
#include "nanocuda/compile/nvrtc_api.h"
#include "nanocuda/driver/error.h"

namespace nanocuda {

namespace {

using detail::OptionKind;
using detail::OptionSpec;

constexpr const char* kOwner = "LinkerOptions";

// cuda.core 1.2's LinkerOptions names with their nvJitLink flags (the typed fields name,
// arch, debug, lineinfo and link_time_optimization are handled by set()).
constexpr std::array kNvJitLinkOptions = {
    OptionSpec{"max_register_count", OptionKind::integer, "-maxrregcount"},
    OptionSpec{"time", OptionKind::flag, "-time"},
    OptionSpec{"verbose", OptionKind::flag, "-verbose"},
    OptionSpec{"ptx", OptionKind::flag, "-ptx"},
    OptionSpec{"optimization_level", OptionKind::prefix_list, "-O"},
    OptionSpec{"ftz", OptionKind::true_false, "-ftz"},
    OptionSpec{"prec_div", OptionKind::true_false, "-prec-div"},
    OptionSpec{"prec_sqrt", OptionKind::true_false, "-prec-sqrt"},
    OptionSpec{"fma", OptionKind::true_false, "-fma"},
    OptionSpec{"kernels_used", OptionKind::text_list, "-kernels-used"},
    OptionSpec{"variables_used", OptionKind::text_list, "-variables-used"},
    OptionSpec{"optimize_unused_variables", OptionKind::flag, "-optimize-unused-variables"},
    OptionSpec{"ptxas_options", OptionKind::text_list, "-Xptxas"},
    OptionSpec{"split_compile", OptionKind::integer, "-split-compile"},
    OptionSpec{"split_compile_extended", OptionKind::integer, "-split-compile-extended"},
    OptionSpec{"no_cache", OptionKind::flag, "-no-cache"},
    OptionSpec{"numba_debug", OptionKind::flag, "-numba-debug"},
};

nvJitLinkInputType input_type(CodeType type) {
  switch (type) {
    case CodeType::cubin: return NVJITLINK_INPUT_CUBIN;
    case CodeType::ptx: return NVJITLINK_INPUT_PTX;
    case CodeType::ltoir: return NVJITLINK_INPUT_LTOIR;
    case CodeType::fatbin: return NVJITLINK_INPUT_FATBIN;
    case CodeType::object: return NVJITLINK_INPUT_OBJECT;
    case CodeType::library: return NVJITLINK_INPUT_LIBRARY;
  }
  return NVJITLINK_INPUT_ANY;
}

std::string read_error_log(const detail::NvJitLinkApi& api, nvJitLinkHandle h) {
  std::string log;
  size_t size = 0;
  if (api.nvJitLinkGetErrorLogSize(h, &size) == NVJITLINK_SUCCESS && size > 1) {
    log.resize(size);
    api.nvJitLinkGetErrorLog(h, log.data());
    log.resize(size - 1);
  }
  return log;
}

std::string read_info_log(const detail::NvJitLinkApi& api, nvJitLinkHandle h) {
  std::string log;
  size_t size = 0;
  if (api.nvJitLinkGetInfoLogSize(h, &size) == NVJITLINK_SUCCESS && size > 1) {
    log.resize(size);
    api.nvJitLinkGetInfoLog(h, log.data());
    log.resize(size - 1);
  }
  return log;
}

}  // namespace

std::vector<std::string> LinkerOptions::option_names() {
  std::vector<std::string> names{"name", "arch", "link_time_optimization", "debug", "lineinfo"};
  for (const auto& spec : kNvJitLinkOptions) names.emplace_back(spec.name);
  return names;
}

namespace {

// What an unknown name is compared with: cuda.core's names and nanocuda's (lto, extra_flags).
std::vector<std::string> settable_names() {
  std::vector<std::string> names = LinkerOptions::option_names();
  names.push_back("lto");
  names.push_back("extra_flags");
  return names;
}

}  // namespace

LinkerOptions& LinkerOptions::set(const std::string& option, OptionValue value) {
  auto text = [&] {
    if (const auto* s = std::get_if<std::string>(&value)) return *s;
    throw TypeError(std::string(kOwner) + ": option '" + option + "' takes a str");
  };
  if (option == "name") name = text();
  else if (option == "arch") arch = text();
  else if (option == "link_time_optimization" || option == "lto") lto = detail::as_bool(kOwner, option.c_str(), value);
  else if (option == "extra_flags") extra_flags = detail::as_words(kOwner, option.c_str(), value);
  else if (option == "debug") debug = detail::as_bool(kOwner, option.c_str(), value);
  else if (option == "lineinfo") lineinfo = detail::as_bool(kOwner, option.c_str(), value);
  else {
    detail::set_named(kOwner, kNvJitLinkOptions, &settable_names, named, option, std::move(value));
  }
  return *this;
}

std::vector<std::string> LinkerOptions::flags(CodeType target, bool has_ltoir) const {
  if (target != CodeType::cubin && target != CodeType::ptx)
    throw ValueError("Linker::link", std::string("unknown target_type '") + code_type_name(target) +
                     "': expected 'cubin' or 'ptx'");
  std::string a = arch.empty() ? ProgramOptions{}.resolved_arch() : normalize_arch(arch);
  std::vector<std::string> f{"-arch=sm_" + a};
  if (lto || has_ltoir) f.push_back("-lto");
  if (debug) f.push_back("-g");
  if (lineinfo) f.push_back("-lineinfo");
  bool ptx = target == CodeType::ptx;
  for (const auto& n : named) {
    if (n.name == "ptx" && std::get_if<bool>(&n.value) && std::get<bool>(n.value)) ptx = false;  // added once below
    if (const OptionSpec* spec = detail::find_option(kNvJitLinkOptions, n.name))
      detail::append_flags(kOwner, *spec, n.value, f);
  }
  if (ptx) f.push_back("-ptx");
  for (const auto& x : extra_flags) f.push_back(x);
  return f;
}

namespace detail {

void destroy_link_session(nvJitLinkHandle h) noexcept {
  try {
    nvjitlink().nvJitLinkDestroy(&h);
  } catch (...) {  // a session exists only once nvJitLink loaded; never throw from here
  }
}

}  // namespace detail

Linker& Linker::add(const ObjectCode& object) {
  inputs_.push_back(object);
  return *this;
}

void Linker::open_session(const std::vector<std::string>& flags) {
  const auto& api = detail::nvjitlink();
  session_.reset();
  std::vector<const char*> argv;
  for (const auto& f : flags) argv.push_back(f.c_str());
  error_log_.clear();
  info_log_.clear();
  nvJitLinkHandle h = nullptr;
  if (api.nvJitLinkCreate(&h, static_cast<uint32_t>(argv.size()), argv.data()) != NVJITLINK_SUCCESS) {
    error_log_ = h ? read_error_log(api, h) : "nvJitLinkCreate failed (an option it does not take?)";
    if (h) api.nvJitLinkDestroy(&h);
    throw CompileError(error_log_, flags, "link", true);
  }
  session_.reset(h);
  session_flags_ = flags;
  session_inputs_ = 0;
  session_text_.clear();
  for (const auto& in : inputs_) {
    const std::string& bytes = in.bytes();
    const std::string& label =
        session_text_.emplace_back(in.name().empty() ? code_type_name(in.type()) : in.name());
    // PTX must be NUL-terminated for nvJitLink.
    const std::string* data = &bytes;
    if (in.type() == CodeType::ptx && (bytes.empty() || bytes.back() != '\0'))
      data = &session_text_.emplace_back(bytes + '\0');
    if (api.nvJitLinkAddData(h, input_type(in.type()), data->data(), data->size(), label.c_str()) !=
        NVJITLINK_SUCCESS) {
      error_log_ = read_error_log(api, h);
      info_log_ = read_info_log(api, h);
      session_.reset();
      throw CompileError(error_log_ + (error_log_.empty() || info_log_.empty() ? "" : "\n") + info_log_, flags,
                         "link input " + label, true);
    }
    ++session_inputs_;
  }
}

nvJitLinkHandle Linker::handle(CodeType target) {
  bool has_ltoir = false;
  for (const auto& in : inputs_) has_ltoir = has_ltoir || in.type() == CodeType::ltoir;
  std::vector<std::string> flags = options_.flags(target, has_ltoir);
  if (!session_ || flags != session_flags_ || session_inputs_ != inputs_.size()) open_session(flags);
  return session_.get();
}

ObjectCode Linker::link(CodeType target) {
  if (inputs_.empty()) throw ValueError("Linker::link", "no inputs were added");
  nvJitLinkHandle h = handle(target);
  const auto& api = detail::nvjitlink();
  const std::vector<std::string> flags = session_flags_;
  // A session is completed once: keep both logs and destroy it on every path out of here.
  struct Guard {
    Linker& self;
    const detail::NvJitLinkApi& api;
    nvJitLinkHandle h;
    ~Guard() {
      self.error_log_ = read_error_log(api, h);
      self.info_log_ = read_info_log(api, h);
      self.session_.reset();
    }
  } guard{*this, api, h};
  auto fail = [&](const std::string& where) {
    std::string log = read_error_log(api, h);
    std::string info = read_info_log(api, h);
    throw CompileError(log + (log.empty() || info.empty() ? "" : "\n") + info, flags, where, true);
  };

  std::map<std::string, std::string> names;
  for (const auto& in : inputs_)
    for (const auto& kv : in.lowered_names()) names.insert(kv);
  if (api.nvJitLinkComplete(h) != NVJITLINK_SUCCESS) fail("link");
  std::string out;
  size_t size = 0;
  if (target == CodeType::ptx) {
    api.nvJitLinkGetLinkedPtxSize(h, &size);
    out.resize(size);
    if (api.nvJitLinkGetLinkedPtx(h, out.data()) != NVJITLINK_SUCCESS) fail("link");
    while (!out.empty() && out.back() == '\0') out.pop_back();
  } else {
    api.nvJitLinkGetLinkedCubinSize(h, &size);
    out.resize(size);
    if (api.nvJitLinkGetLinkedCubin(h, out.data()) != NVJITLINK_SUCCESS) fail("link");
  }
  std::string arch = flags[0].substr(std::string("-arch=sm_").size());
  return ObjectCode::from_bytes(target, std::move(out), options_.name)
      .with_lowered_names(std::move(names))
      .with_arch(arch);
}

ObjectCode link(const std::vector<ObjectCode>& objects, LinkerOptions options, CodeType target) {
  Linker linker(std::move(options));
  for (const auto& o : objects) linker.add(o);
  return linker.link(target);
}

}  // namespace nanocuda
