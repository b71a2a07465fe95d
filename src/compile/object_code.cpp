// ObjectCode: shared immutable bytes, lazily loaded into a Library once.
#include "nanocuda/compile/object_code.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "nanocuda/driver/driver_api.h"
#include "nanocuda/driver/driver_version.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/compile/cubin_info.h"
#include "nanocuda/compile/library.h"
#include "nanocuda/compile/linker.h"

namespace nanocuda {

struct ObjectCode::State {
  CodeType type = CodeType::cubin;
  std::string bytes;
  std::string name;
  std::string path;
  std::string arch;
  std::string log;
  int compiler_version = 0;
  std::map<std::string, std::string> lowered;
  std::once_flag load_once;
  std::shared_ptr<Library> library;
  std::atomic<CUlibrary> loaded{nullptr};  // library's handle, published once it is loaded
};

ObjectCode ObjectCode::from_bytes(CodeType type, std::string bytes, std::string name) {
  auto s = std::make_shared<State>();
  s->type = type;
  s->bytes = std::move(bytes);
  s->name = std::move(name);
  return ObjectCode(std::move(s));
}

ObjectCode ObjectCode::from_file(CodeType type, const std::string& path, std::string name) {
  const std::string call = std::string("ObjectCode::from_") + code_type_name(type);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))  // ifstream would read a folder as empty
    throw ValueError(call + ": " + path + " is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ValueError(call + ": cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  ObjectCode code = from_bytes(type, buf.str(), name.empty() ? path : std::move(name));
  code.state_->path = path;
  return code;
}

CodeType ObjectCode::type() const noexcept { return state_->type; }
const std::string& ObjectCode::bytes() const noexcept { return state_->bytes; }
const std::string& ObjectCode::name() const noexcept { return state_->name; }
const std::string& ObjectCode::path() const noexcept { return state_->path; }
const std::string& ObjectCode::arch() const noexcept { return state_->arch; }
const std::string& ObjectCode::log() const noexcept { return state_->log; }
int ObjectCode::compiler_version() const noexcept { return state_->compiler_version; }
const std::map<std::string, std::string>& ObjectCode::lowered_names() const noexcept {
  return state_->lowered;
}

ObjectCode ObjectCode::with_lowered_names(std::map<std::string, std::string> names) const {
  ObjectCode copy = from_bytes(type(), bytes(), name());
  copy.state_->path = path();
  copy.state_->arch = arch();
  copy.state_->log = log();
  copy.state_->compiler_version = compiler_version();
  copy.state_->lowered = std::move(names);
  return copy;
}

ObjectCode ObjectCode::with_log(std::string log) const {
  ObjectCode copy = with_lowered_names(lowered_names());
  copy.state_->log = std::move(log);
  return copy;
}

ObjectCode ObjectCode::with_compiler_version(int version) const {
  ObjectCode copy = with_lowered_names(lowered_names());
  copy.state_->compiler_version = version;
  return copy;
}

ObjectCode ObjectCode::with_arch(std::string arch) const {
  ObjectCode copy = with_lowered_names(lowered_names());
  copy.state_->arch = std::move(arch);
  return copy;
}

std::shared_ptr<Library> ObjectCode::library() const {
  // Relocatable device code (a host object or library holding it) is linker input, not a
  // loadable image: cuda.core's words, which its users match on; LTO-IR is linked below.
  if (type() == CodeType::object || type() == CodeType::library)
    throw std::runtime_error(std::string("Unsupported code type \"") + code_type_name(type()) +
                             "\" for loading kernels (cubin, ptx, fatbin and ltoir load); link " +
                             code_type_name(type()) + " code with a Linker first");
  std::call_once(state_->load_once, [&] {
    std::string description =
        std::string(code_type_name(type())) + (name().empty() ? "" : " " + name());
    // Code from an NVRTC newer than the driver fails to load with a bare error (or, for PTX,
    // CUDA_ERROR_UNSUPPORTED_PTX_VERSION); say which NVRTC to install instead.
    if (compiler_version() != 0) {
      (void)detail::driver();
      const int driver = detail::installed_driver_version();
      const int needed = detail::driver_needed_for(compiler_version(), code_type_name(type()));
      if (driver < needed)
        throw DriverTooOldError("loading " + description + " compiled by NVRTC " +
                                    detail::cuda_version_text(compiler_version()),
                                driver, needed, detail::newer_nvrtc_advice(driver, needed));
    }
    if (type() == CodeType::ltoir) {
      LinkerOptions opts;
      opts.arch = arch();
      ObjectCode linked = link({*this}, opts);
      state_->library = Library::load(linked.bytes().data(), description);
    } else if (type() == CodeType::ptx && (bytes().empty() || bytes().back() != '\0')) {
      std::string text = bytes();  // the driver reads PTX up to its NUL
      state_->library = Library::load(text.c_str(), description);
    } else {
      state_->library = Library::load(bytes().data(), description);
    }
    state_->loaded.store(state_->library->handle(), std::memory_order_release);
  });
  return state_->library;
}

CUlibrary ObjectCode::loaded_handle() const noexcept { return state_->loaded.load(std::memory_order_acquire); }

std::vector<std::string> ObjectCode::kernel_names() const {
  if (type() == CodeType::cubin) return cubin_kernel_names(bytes());
  return library()->kernel_names();
}

Kernel ObjectCode::get_kernel(const std::string& name) const {
  auto lib = library();
  if (auto it = state_->lowered.find(name); it != state_->lowered.end())
    return lib->get_kernel(it->second);
  return lib->get_kernel(name);
}

}  // namespace nanocuda
