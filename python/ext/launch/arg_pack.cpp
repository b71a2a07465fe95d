// Per-argument conversion with per-slot cached type decisions (the launch hot path).
#include "launch/arg_pack.h"

#include <string>
#include <vector>

#include "core/py_buffer.h"
#include "tma/bound_tensor_map.h"
#include "interop/interop.h"
#include "interop/torch_abi.h"
#include "fastpath/py_int.h"
#include "nanocuda/core/array_view.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/compile/param_class.h"
#include "nanocuda/launch/param_buffer.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

PyTypeObject* g_tensor_map_type = nullptr;
TensorMapBytes g_tensor_map_bytes = nullptr;

std::string type_name_of(PyObject* obj) { return Py_TYPE(obj)->tp_name; }

// numpy's scalar types (np.uint64, np.float32, ...) keep their value inside the object at a
// fixed offset, and their buffer points there; reading it directly skips the buffer protocol
// (numpy's getbuffer fills a format and shape each call) on every later launch. Checked
// once per type: a 0-d buffer inside the object's fixed-size part, else the Scalar path.
void inline_scalar(ArgSlot& slot, PyObject* arg) {
  PyTypeObject* t = Py_TYPE(arg);
  std::string name = t->tp_name;
  if (name.rfind("numpy.", 0) != 0 || name == "numpy.void" || name == "numpy.str_" ||
      name == "numpy.bytes_" || name == "numpy.object_" || t->tp_itemsize != 0)
    return;
  Py_buffer view;
  if (PyObject_GetBuffer(arg, &view, PyBUF_ND) != 0) {
    PyErr_Clear();
    return;
  }
  auto offset = static_cast<const char*>(view.buf) - reinterpret_cast<const char*>(arg);
  if (view.ndim == 0 && offset >= static_cast<std::ptrdiff_t>(sizeof(PyObject)) && view.len > 0 &&
      view.len <= 16 && offset + view.len <= t->tp_basicsize) {
    slot.kind = ArgKind::InlineScalar;
    slot.scalar_offset = static_cast<std::uint16_t>(offset);
    slot.scalar_size = static_cast<std::uint16_t>(view.len);
  }
  PyBuffer_Release(&view);
}

// Out of line and cold: it runs when a slot sees a new type, and inlined it crowded the hot loop.
[[gnu::noinline, gnu::cold]] void classify(ArgSlot& slot, PyObject* arg) {
  PyTypeObject* t = Py_TYPE(arg);
  BoundTensorMap* bound = slot.bound;
  SlotChecks checks = slot.checks;
  slot = ArgSlot{};
  slot.type = t;
  slot.bound = bound;
  slot.checks = checks;
  // Exact int/float first: numpy's float64 subclasses float but must keep its exact bytes.
  if (t == &PyBool_Type) slot.kind = ArgKind::Bool;
  else if (PyLong_CheckExact(arg)) slot.kind = ArgKind::Int;
  else if (PyFloat_CheckExact(arg)) slot.kind = ArgKind::Float;
  else if (g_tensor_map_type && PyObject_TypeCheck(arg, g_tensor_map_type)) slot.kind = ArgKind::TensorMap;
  else if (bound) slot.kind = ArgKind::BoundMap;  // a tensor to describe with the template
  else if (PyBytes_Check(arg) || PyByteArray_Check(arg)) slot.kind = ArgKind::RawBytes;
  else if (t == reinterpret_cast<PyTypeObject*>(nb::type<PyBuffer>().ptr())) slot.kind = ArgKind::Buffer;
  else if (has_device_pointer(nb::handle(arg))) {
    slot.kind = ArgKind::Pointer;
    if ((slot.reader = exchange_reader(t))) {
      // A pointer slot needs the address, device and dtype: torch's C ABI reader skips its
      // dim/strides calls (the full read happens only where the slot has checks).
      slot.reader = torch_abi::pointer_only(slot.reader);
      slot.kind = ArgKind::Exchange;
      return;
    }
    // torch.Tensor (and subclasses that keep its methods): call the C methods directly.
    if ((slot.torch = torch::c_methods(t))) slot.kind = ArgKind::Torch;
  } else if (PyObject_CheckBuffer(arg)) {
    slot.kind = ArgKind::Scalar;
    inline_scalar(slot, arg);
  } else if (PyLong_Check(arg)) {
    slot.kind = ArgKind::Int;  // int subclasses such as IntEnum
  } else if (PyFloat_Check(arg)) {
    slot.kind = ArgKind::Float;
  } else if (PyIndex_Check(arg)) {
    slot.kind = ArgKind::IntLike;
  } else if (PyComplex_Check(arg)) {
    slot.kind = ArgKind::Complex;
  } else if (PyObject* get_ptr = PyObject_GetAttrString(reinterpret_cast<PyObject*>(t), "getPtr")) {
    Py_DECREF(get_ptr);  // cuda.bindings' driver handles (CUdeviceptr, ...) convert with int()
    if (t->tp_as_number && t->tp_as_number->nb_int) slot.kind = ArgKind::IntLike;
  } else {
    PyErr_Clear();
  }
}

std::string where(const ParamPacker& p, std::size_t i) {
  return "kernel '" + std::string(p.kernel_name()) + "', parameter " + std::to_string(i);
}

// Re-raises an interop error with the kernel and parameter in front, built only on failure.
[[noreturn]] void rethrow_at(const ParamPacker& p, std::size_t i, const nb::builtin_exception& e) {
  std::string text = e.what();
  if (text.rfind("launch: ", 0) == 0) text = text.substr(8);
  throw nb::builtin_exception(e.type(), (where(p, i) + ": " + text).c_str());
}

// A Python value whose kind contradicts the parameter's declared class (a float for a
// `float*`, an int for a `float`). Run only when a slot sees a new type, so the hot loop
// pays nothing; on failure the slot forgets the type, so the next call checks again.
[[gnu::noinline, gnu::cold]] void check_class(const ParamPacker& p, std::size_t i, ArgSlot& slot,
                                              PyObject* arg) {
  const ParamClass c = p.layout().class_of(i);
  if (c == ParamClass::Unknown) return;
  const char* hint = nullptr;
  switch (slot.kind) {
    case ArgKind::Float:
      if (c == ParamClass::Pointer) hint = "pass a device array, or an int address";
      else if (c != ParamClass::Floating) hint = "pass an int, or a numpy/ctypes scalar of the exact type";
      break;
    case ArgKind::Int:
      if (c == ParamClass::Floating) hint = "pass a float (e.g. 2.0), or a numpy/ctypes scalar of the exact type";
      break;
    case ArgKind::Bool:
      if (c == ParamClass::Floating || c == ParamClass::Pointer) hint = "pass a value of the parameter's type";
      break;
    case ArgKind::Exchange:
    case ArgKind::Torch:
    case ArgKind::Buffer:
    case ArgKind::Pointer:
      if (c == ParamClass::Floating) hint = "a device array is passed as a pointer";
      break;
    default: break;
  }
  if (!hint) return;
  slot.type = nullptr;
  throw nanocuda::TypeError(where(p, i) + " is " + describe(c) +
                            " in the kernel's signature; cannot pass a " + type_name_of(arg) +
                            " there (" + hint + ")");
}

[[noreturn]] void unsupported(const ParamPacker& p, std::size_t i, PyObject* arg) {
  throw nb::type_error((where(p, i) + ": cannot pass a " + type_name_of(arg) +
                        " to a kernel (expected int, float, complex, bool, a device array, a TensorMap, "
                        "bytes, or a numpy/ctypes scalar)")
                           .c_str());
}

// The cold int path: an int-convertible object, written like an int (range-checked at the
// parameter's size).
[[gnu::noinline, gnu::cold]] void pack_int_like(ParamPacker& p, std::size_t i, PyObject* arg) {
  nb::object v = nb::steal(PyIndex_Check(arg) ? PyNumber_Index(arg) : PyNumber_Long(arg));
  if (!v.is_valid()) throw nb::python_error();
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (overflow == 0) {
    if (x == -1 && PyErr_Occurred()) throw nb::python_error();
    p.write_int(i, x);
    return;
  }
  unsigned long long u = PyLong_AsUnsignedLongLong(v.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw nb::value_error((where(p, i) + ": int does not fit in 64 bits").c_str());
  }
  p.write_uint(i, u);
}

inline void pack_inline_scalar(ParamPacker& p, std::size_t i, PyObject* arg, const ArgSlot& slot) {
  p.write_bytes(i, reinterpret_cast<const char*>(arg) + slot.scalar_offset, slot.scalar_size,
                Py_TYPE(arg)->tp_name);
}

void check_slot_slow(const ParamPacker& p, std::size_t i, const SlotChecks& c, PyObject* arg);

// A Buffer the Buffer kind does not read in place (closed, on another device, a parameter
// that is not 8 bytes, a slot with checks, not initialised): what the Pointer case does, so
// the errors are the Pointer kind's.
[[gnu::noinline, gnu::cold]] void pack_buffer_slow(ParamPacker& p, std::size_t i, PyObject* arg,
                                                   const ArgSlot& slot, int device) {
  if (p.size_of(i) != 8) p.size_mismatch(i, 8, "device pointer");
  if (slot.checks.any) check_slot_slow(p, i, slot.checks, arg);
  try {
    p.write_pointer(i, device_pointer(nb::handle(arg), device, "launch", false));
  } catch (const nb::builtin_exception& e) {
    rethrow_at(p, i, e);
  }
}

// The kinds the switch in pack_args does not list (so its code layout, which the int and
// pointer cases are sensitive to, is unchanged): Buffers, numpy scalars read in place, int-likes.
[[gnu::noinline]] void pack_other(ParamPacker& p, std::size_t i, PyObject* arg, const ArgSlot& slot,
                                  int device) {
  if (slot.kind == ArgKind::Buffer) [[likely]] {
    // Its pointer without device_pointer()'s type dispatch (~80 instructions of a Graph.update
    // or Launcher call with a Buffer, on the mock).
    const PyBuffer* b = nb::inst_ready(nb::handle(arg)) ? nb::inst_ptr<PyBuffer>(arg) : nullptr;
    if (b && p.size_of(i) == 8 && !slot.checks.any && !b->buffer.is_closed() &&
        (device < 0 || b->buffer.device().ordinal() == device)) [[likely]]
      return p.write_pointer(i, b->buffer.ptr());
    return pack_buffer_slow(p, i, arg, slot, device);
  }
  if (slot.kind == ArgKind::InlineScalar) [[likely]]
    return pack_inline_scalar(p, i, arg, slot);
  if (slot.kind == ArgKind::IntLike) return pack_int_like(p, i, arg);
  if (slot.kind == ArgKind::Complex) {
    if (p.size_of(i) != 16)
      throw nanocuda::TypeError(where(p, i) + " is " + std::to_string(p.size_of(i)) +
                                " bytes; a Python complex is 16 (two doubles, cuda::std::complex<double>): "
                                "pass a numpy.complex64 for an 8-byte complex<float>");
    const double parts[2] = {PyComplex_RealAsDouble(arg), PyComplex_ImagAsDouble(arg)};
    if (PyErr_Occurred()) throw nb::python_error();
    return p.write_bytes(i, parts, sizeof parts, "complex");
  }
  unsupported(p, i, arg);
}

void pack_scalar(ParamPacker& p, std::size_t i, PyObject* arg) {
  Py_buffer view;
  if (PyObject_GetBuffer(arg, &view, PyBUF_ND) != 0) throw nb::python_error();
  struct Release {
    Py_buffer* v;
    ~Release() { PyBuffer_Release(v); }
  } release{&view};
  // Only 0-d buffers (numpy and ctypes scalars) are scalars; a host array passed where a
  // kernel expects a pointer must be an error, never its bytes.
  if (view.ndim != 0)
    throw nb::value_error((where(p, i) + ": a " + type_name_of(arg) +
                           " with " + std::to_string(view.ndim) +
                           " dimension(s) is host memory; pass a device array or a scalar")
                              .c_str());
  p.write_bytes(i, view.buf, static_cast<std::size_t>(view.len), Py_TYPE(arg)->tp_name);
}

// A slot's SlotChecks against a tensor's dtype and geometry (contiguous as torch defines
// it: sizes of 1 and empty tensors do not constrain strides). Cold: a failure raises.
[[gnu::noinline]] void check_slot(const ParamPacker& p, std::size_t i, const SlotChecks& c,
                                  dlpack::DataType dtype, int ndim, const int64_t* shape,
                                  const int64_t* strides) {
  std::uint32_t code = dtype.code | (std::uint32_t{dtype.bits} << 8) | (std::uint32_t{dtype.lanes} << 16);
  if (c.dtypes[0] && code != c.dtypes[0] && code != c.dtypes[1] && code != c.dtypes[2] &&
      code != c.dtypes[3])
    throw nb::type_error((where(p, i) + ": the tensor's dtype (DLPack code " +
                          std::to_string(dtype.code) + ", " + std::to_string(dtype.bits) +
                          " bits) is not one this launch requires").c_str());
  if (c.contiguous && !nanocuda::is_contiguous(ndim, shape, strides)) [[unlikely]]
    throw nb::value_error((where(p, i) + ": the tensor must be contiguous").c_str());
}

// The same for kinds that read no DLTensor (torch without the exchange API, Buffers, CAI):
// the full description, only when checks were asked for.
[[gnu::noinline, gnu::cold]] void check_slot_slow(const ParamPacker& p, std::size_t i,
                                                  const SlotChecks& c, PyObject* arg) {
  ArrayView v = describe_array(nb::handle(arg), "launch");
  check_slot(p, i, c, v.dtype.dl, static_cast<int>(v.shape.size()), v.shape.data(), v.strides.data());
}

}  // namespace

void register_tensor_map_type(PyTypeObject* type, TensorMapBytes bytes) {
  g_tensor_map_type = type;
  g_tensor_map_bytes = bytes;
}

void pack_args(ParamPacker& p, PyObject* const* args, std::size_t n, int device, ArgSlot* slots) {
  p.check_count(n);
  for (std::size_t i = 0; i < n; ++i) {
    PyObject* arg = args[i];
    ArgSlot& slot = slots[i];
    if (Py_TYPE(arg) != slot.type) [[unlikely]] {
      classify(slot, arg);
      check_class(p, i, slot, arg);
    }
    switch (slot.kind) {
      case ArgKind::Int: {
        long long small;
        if (read_small_int(arg, &small)) [[likely]] {
          p.write_int(i, small);
          break;
        }
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(arg, &overflow);
        if (overflow == 0) [[likely]] {
          if (v == -1 && PyErr_Occurred()) throw nb::python_error();
          p.write_int(i, v);
        } else {
          unsigned long long u = PyLong_AsUnsignedLongLong(arg);
          if (PyErr_Occurred()) {
            PyErr_Clear();
            throw nb::value_error((where(p, i) + ": int does not fit in 64 bits").c_str());
          }
          p.write_uint(i, u);
        }
        break;
      }
      case ArgKind::Float: p.write_float(i, PyFloat_AS_DOUBLE(arg)); break;
      case ArgKind::Bool: p.write_bool(i, arg == Py_True); break;
      case ArgKind::Torch: {
        if (p.size_of(i) != 8) p.size_mismatch(i, 8, "device pointer");
        if (torch::device(slot.torch, arg) != device) [[unlikely]]
          try {
            device_pointer(nb::handle(arg), device, "launch");  // raises the precise error
          } catch (const nb::builtin_exception& e) {
            rethrow_at(p, i, e);
          }
        if (slot.checks.any) [[unlikely]] check_slot_slow(p, i, slot.checks, arg);
        p.write_pointer(i, torch::data_ptr(slot.torch, arg));
        break;
      }
      case ArgKind::Exchange: {
        if (p.size_of(i) != 8) p.size_mismatch(i, 8, "device pointer");
        dlpack::Tensor view;
        if (slot.reader(arg, &view) != 0) throw nb::python_error();
        bool on_cuda = view.device.device_type == dlpack::kCUDA ||
                       view.device.device_type == dlpack::kCUDAManaged;
        if (!on_cuda || (device >= 0 && view.device.device_id != device)) [[unlikely]] {
          try {
            device_pointer(nb::handle(arg), device, "launch");  // raises the precise error
          } catch (const nb::builtin_exception& e) {
            rethrow_at(p, i, e);
          }
        }
        if (slot.checks.any) [[unlikely]] {
          if (view.ndim < 0 && torch_abi::with_geometry(slot.reader)(arg, &view) != 0)  // pointer-only read
            throw nb::python_error();
          check_slot(p, i, slot.checks, view.dtype, view.ndim, view.shape, view.strides);
        }
        p.write_pointer(i, reinterpret_cast<std::uint64_t>(view.data) + view.byte_offset);
        break;
      }
      case ArgKind::Pointer:
        if (p.size_of(i) != 8) p.size_mismatch(i, 8, "device pointer");
        if (slot.checks.any) [[unlikely]] check_slot_slow(p, i, slot.checks, arg);
        try {
          p.write_pointer(i, device_pointer(nb::handle(arg), device, "launch", false));
        } catch (const nb::builtin_exception& e) {
          rethrow_at(p, i, e);
        }
        break;
      case ArgKind::TensorMap: p.write_bytes(i, g_tensor_map_bytes(arg), 128, "TensorMap"); break;
      case ArgKind::BoundMap:
        try {
          p.write_bytes(i, &slot.bound->update(nb::handle(arg), "tensor map"), 128,
                        "TensorMap");
        } catch (const nanocuda::ValueError& e) {
          throw nanocuda::ValueError(where(p, i) + ": " + e.what());
        } catch (const nanocuda::TypeError& e) {
          throw nanocuda::TypeError(where(p, i) + ": " + e.what());
        }
        break;
      case ArgKind::RawBytes:
        if (PyBytes_Check(arg))
          p.write_bytes(i, PyBytes_AS_STRING(arg), PyBytes_GET_SIZE(arg), "bytes");
        else
          p.write_bytes(i, PyByteArray_AS_STRING(arg), PyByteArray_GET_SIZE(arg), "bytearray");
        break;
      case ArgKind::Scalar: pack_scalar(p, i, arg); break;
      default: pack_other(p, i, arg, slot, device);  // kinds added later: the switch above stays as it was
    }
  }
}

nb::bytes pack_with_layout(nb::list layout, const std::string& name, nb::args args) {
  ParamLayout l;
  for (nb::handle p : layout)
    l.params.push_back({nb::cast<std::uint32_t>(p[0]), nb::cast<std::uint32_t>(p[1])});
  if (auto c = param_classes_from_mangled_name(name); c.size() == l.params.size())
    l.classes = std::move(c);
  ParamBuffer buffer(l);
  std::vector<ArgSlot> slots(l.count() + 1);
  ParamPacker packer(l, name, buffer.data(), buffer.pointers());
  std::vector<PyObject*> raw;
  for (nb::handle a : args) raw.push_back(a.ptr());
  pack_args(packer, raw.data(), raw.size(), -1, slots.data());
  return nb::bytes(reinterpret_cast<const char*>(buffer.data()), l.total_size());
}

HeapPackedArgs::HeapPackedArgs(const ParamLayout& layout, std::string_view kernel_name,
                               nb::tuple args, int device)
    : storage_(layout.total_size() + 16), ptrs_(layout.count() + 1) {
  auto* aligned = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(storage_.data()) + 15) & ~std::uintptr_t{15});
  ParamPacker packer(layout, kernel_name, aligned, ptrs_.data());
  std::vector<ArgSlot> slots(layout.count() + 1);
  std::vector<PyObject*> raw;
  raw.reserve(args.size());
  for (nb::handle a : args) raw.push_back(a.ptr());
  pack_args(packer, raw.data(), raw.size(), device, slots.data());
}

}  // namespace nanocuda::py
