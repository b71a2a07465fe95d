// Python arguments -> kernel parameter bytes, checked against the kernel's real layout.
// The decision for each argument's Python type is cached per parameter slot, so a hot loop
// that passes the same types pays for one pointer compare per argument.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "interop/dlpack_exchange.h"
#include "fastpath/torch_tensor.h"
#include "nanocuda/launch/param_packer.h"

namespace nanocuda::py {

enum class ArgKind : std::uint8_t {
  Unknown,
  Int,
  Float,
  Bool,
  Exchange,    // a type with the DLPack C exchange API: one C call, no Python
  Torch,       // torch.Tensor without it: data_ptr() and get_device() through descriptors
  Pointer,     // any other device-pointer object (Buffer, DLPack, CAI, data_ptr())
  RawBytes,    // bytes / bytearray: a struct by value
  Scalar,      // numpy / ctypes scalar (0-d buffer): its exact bytes
  TensorMap,   // nanocuda.TensorMap: 128 bytes by value
  BoundMap,    // a tensor for a parameter bound to a TensorMap template (Kernel.bind)
  InlineScalar,  // a numpy scalar type whose value sits at a fixed offset in the object
  IntLike,     // other ints: __index__ objects, cuda.bindings handles (CUdeviceptr: int())
  Complex,     // a Python complex: two doubles (cuda::std::complex<double>), as cuda.core packs it
  Buffer,      // nanocuda.Buffer (exact type): its pointer and device read in place
};

class BoundTensorMap;

// What a caller requires of the tensor in a slot (torch ops, through _internal.launcher_require):
// checked on the DLTensor the Exchange path reads anyway, so the op need not ask torch.
struct SlotChecks {
  std::uint32_t dtypes[4] = {};  // DLPack code | bits << 8 | lanes << 16; 0 = unused
  bool contiguous = false;
  bool any = false;
};

struct ArgSlot {
  PyTypeObject* type = nullptr;
  ArgKind kind = ArgKind::Unknown;
  std::uint16_t scalar_offset = 0;    // InlineScalar: where the value is in the object (in the
  std::uint16_t scalar_size = 0;      // padding after `kind`: the slot stays 48 bytes)
  torch::Methods torch;            // Torch: the type's data_ptr and get_device C methods
  TensorViewReader reader = nullptr;  // Exchange: the producer's no-sync DLTensor reader
  BoundTensorMap* bound = nullptr;    // set at bind time; survives re-classification
  SlotChecks checks;                  // likewise
};

// Packs `args[0..n)` into `packer`; `device` is the launch's device (pointers must live
// there); `slots` holds at least n cached decisions. Raises TypeError/ValueError naming the
// kernel and parameter on any mismatch; nothing is launched then.
void pack_args(ParamPacker& packer, PyObject* const* args, std::size_t n, int device,
               ArgSlot* slots);

// `args` packed (and checked, as pack_args does) into heap storage this object owns: the form of
// the cold paths (graph node edits), where a launch packs into the Launcher's inline buffer.
class HeapPackedArgs {
 public:
  HeapPackedArgs(const ParamLayout& layout, std::string_view kernel_name, nanobind::tuple args,
                 int device);
  [[nodiscard]] void** params() noexcept { return ptrs_.data(); }

 private:
  std::vector<unsigned char> storage_;
  std::vector<void*> ptrs_;
};

// The bytes a launch packs for `args` against a layout [(offset, size), ...] and a kernel name
// (a mangled name adds the parameter classes, as Kernel does); no device needed. The package
// uses it (_internal.pack_params: jax_ops packs at trace time), the tests too (_testing.pack_args).
nanobind::bytes pack_with_layout(nanobind::list layout, const std::string& name, nanobind::args args);

// Registers how to read a TensorMap's 128 bytes (set by the TensorMap bindings).
using TensorMapBytes = const void* (*)(PyObject* obj);
void register_tensor_map_type(PyTypeObject* type, TensorMapBytes bytes);

}  // namespace nanocuda::py
