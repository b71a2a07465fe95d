// nanocuda's XLA FFI handler: launches one nanocuda kernel on XLA's CUDA stream.
//
// Built on demand against the installed jaxlib's FFI headers (nanocuda.jax_ops._ffi). One
// registered target serves every op: the kernel, its launch shape and its parameter bytes
// arrive as static attributes that nanocuda packed and checked when the op was traced, so a
// call only patches XLA's buffer addresses into a copy of those bytes and launches.
#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// The two driver types the handler needs, declared as cuda.h does so no toolkit is needed
// to build it (a CUkernel is accepted wherever cuLaunchKernel takes a CUfunction).
using CUstream = struct CUstream_st*;
using LaunchKernel = int (*)(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned shared, CUstream stream,
                             void** params, void** extra);
using GetErrorName = int (*)(int, const char**);

constexpr std::size_t kMaxParamBytes = 4096;  // trace time refuses more (jax_ops._MAX_PARAM_BYTES)

struct Driver {
  LaunchKernel launch = nullptr;
  GetErrorName error_name = nullptr;
};

// libcuda is already loaded by XLA and nanocuda; this finds the same copy once.
const Driver& driver() {
  static const Driver d = [] {
    Driver out;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (lib == nullptr) lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (lib != nullptr) {
      out.launch = reinterpret_cast<LaunchKernel>(dlsym(lib, "cuLaunchKernel"));
      out.error_name = reinterpret_cast<GetErrorName>(dlsym(lib, "cuGetErrorName"));
    }
    return out;
  }();
  return d;
}

ffi::Error failure(const std::string& what) {
  return ffi::Error(ffi::ErrorCode::kInternal, "nanocuda jax op: " + what);
}

// Copies the parameter bytes packed at trace time into `bytes` and patches each buffer's
// address in. slots: (buffer, byte offset) pairs, buffers being the inputs then the first
// `n_rets` results (one may sit at several offsets, an aliased result at none).
ffi::Error fill(const ffi::RemainingArgs& args, const ffi::RemainingRets& rets, std::size_t n_rets,
                ffi::Span<const int64_t> dims, ffi::Span<const int64_t> slots,
                ffi::Span<const int64_t> params, int64_t param_bytes, unsigned char* bytes) {
  const std::size_t n_args = args.size(), n_bytes = static_cast<std::size_t>(param_bytes);
  if (dims.size() != 7 || param_bytes < 0 || n_bytes > kMaxParamBytes ||
      n_bytes > params.size() * sizeof(int64_t) || slots.size() % 2 != 0)
    return failure("malformed launch attributes (not made by nanocuda.jax_ops?)");
  std::memcpy(bytes, params.begin(), n_bytes);
  for (std::size_t i = 0; i < slots.size(); i += 2) {
    const int64_t buffer = slots[i], at = slots[i + 1];
    if (buffer < 0 || static_cast<std::size_t>(buffer) >= n_args + n_rets || at < 0 ||
        static_cast<std::size_t>(at) + sizeof(void*) > n_bytes)
      return failure("buffer slot outside the call's buffers or parameter bytes");
    void* data = nullptr;
    if (static_cast<std::size_t>(buffer) < n_args) {
      auto b = args.get<ffi::AnyBuffer>(static_cast<std::size_t>(buffer));
      if (!b.has_value()) return b.error();
      data = b->untyped_data();
    } else {
      auto b = rets.get<ffi::AnyBuffer>(static_cast<std::size_t>(buffer) - n_args);
      if (!b.has_value()) return b.error();
      data = (*b)->untyped_data();
    }
    std::memcpy(bytes + at, &data, sizeof data);
  }
  return ffi::Error::Success();
}

// dims: grid x/y/z, block x/y/z, dynamic shared bytes.
ffi::Error launch(CUstream stream, ffi::RemainingArgs args, ffi::RemainingRets rets,
                  int64_t kernel, ffi::Span<const int64_t> dims, ffi::Span<const int64_t> slots,
                  ffi::Span<const int64_t> params, int64_t param_bytes) {
  const Driver& d = driver();
  if (d.launch == nullptr) return failure("cannot find cuLaunchKernel in libcuda.so.1");
  alignas(16) unsigned char bytes[kMaxParamBytes];
  if (ffi::Error e = fill(args, rets, rets.size(), dims, slots, params, param_bytes, bytes); e.failure())
    return e;
  std::size_t size = static_cast<std::size_t>(param_bytes);
  void* extra[] = {reinterpret_cast<void*>(1), bytes,   // CU_LAUNCH_PARAM_BUFFER_POINTER
                   reinterpret_cast<void*>(2), &size,   // CU_LAUNCH_PARAM_BUFFER_SIZE
                   nullptr};                            // CU_LAUNCH_PARAM_END
  const int r = d.launch(reinterpret_cast<void*>(kernel), static_cast<unsigned>(dims[0]),
                         static_cast<unsigned>(dims[1]), static_cast<unsigned>(dims[2]),
                         static_cast<unsigned>(dims[3]), static_cast<unsigned>(dims[4]),
                         static_cast<unsigned>(dims[5]), static_cast<unsigned>(dims[6]), stream,
                         nullptr, size ? extra : nullptr);
  if (r != 0) {
    const char* name = nullptr;
    if (d.error_name == nullptr || d.error_name(r, &name) != 0 || name == nullptr) name = "?";
    return failure("cuLaunchKernel failed: " + std::string(name) + " (" + std::to_string(r) + ")");
  }
  return ffi::Error::Success();
}

// The launch's parameter bytes written into the last result instead of launched: lets the
// CPU tests see what XLA hands the handler (attributes, buffer addresses) without a GPU.
ffi::Error pack_only(ffi::RemainingArgs args, ffi::RemainingRets rets, int64_t /*kernel*/,
                     ffi::Span<const int64_t> dims, ffi::Span<const int64_t> slots,
                     ffi::Span<const int64_t> params, int64_t param_bytes) {
  if (rets.size() == 0) return failure("pack_only needs a result for the bytes");
  auto out = rets.get<ffi::AnyBuffer>(rets.size() - 1);
  if (!out.has_value()) return out.error();
  alignas(16) unsigned char bytes[kMaxParamBytes];
  if (ffi::Error e = fill(args, rets, rets.size() - 1, dims, slots, params, param_bytes, bytes); e.failure())
    return e;
  if ((*out)->size_bytes() < static_cast<std::size_t>(param_bytes)) return failure("bytes result too small");
  std::memcpy((*out)->untyped_data(), bytes, static_cast<std::size_t>(param_bytes));
  return ffi::Error::Success();
}

}  // namespace

// The exported symbols (the library is built with hidden visibility).
extern "C" __attribute__((visibility("default"))) XLA_FFI_Error* NanocudaJaxLaunch(XLA_FFI_CallFrame*);
extern "C" __attribute__((visibility("default"))) XLA_FFI_Error* NanocudaJaxPackOnly(XLA_FFI_CallFrame*);

XLA_FFI_DEFINE_HANDLER_SYMBOL(NanocudaJaxLaunch, launch,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<CUstream>>()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<int64_t>("kernel")
                                  .Attr<ffi::Span<const int64_t>>("dims")
                                  .Attr<ffi::Span<const int64_t>>("slots")
                                  .Attr<ffi::Span<const int64_t>>("params")
                                  .Attr<int64_t>("param_bytes"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(NanocudaJaxPackOnly, pack_only,
                              ffi::Ffi::Bind()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<int64_t>("kernel")
                                  .Attr<ffi::Span<const int64_t>>("dims")
                                  .Attr<ffi::Span<const int64_t>>("slots")
                                  .Attr<ffi::Span<const int64_t>>("params")
                                  .Attr<int64_t>("param_bytes"));
