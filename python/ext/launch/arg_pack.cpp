// Per-argument conversion with per-slot cached type decisions (the launch hot path).
#include "launch/arg_pack.h"

#include <string>

#include "tma/bound_tensor_map.h"
#include "interop/interop.h"
#include "toolkit/py_int.h"
#include "nanocuda/driver/error.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

PyTypeObject* g_tensor_map_type = nullptr;
TensorMapBytes g_tensor_map_bytes = nullptr;

std::string type_name_of(PyObject* obj) { return Py_TYPE(obj)->tp_name; }

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
  else if (has_device_pointer(nb::handle(arg))) {
    slot.kind = ArgKind::Pointer;
    if ((slot.reader = exchange_reader(t))) {
      slot.kind = ArgKind::Exchange;
      return;
    }
    // torch.Tensor (and subclasses that keep its methods): call the C methods directly.
    PyObject* dp = PyObject_GetAttrString(reinterpret_cast<PyObject*>(t), "data_ptr");
    PyObject* gd = PyObject_GetAttrString(reinterpret_cast<PyObject*>(t), "get_device");
    if (dp && gd && std::string(Py_TYPE(dp)->tp_name) == "method_descriptor" &&
        std::string(Py_TYPE(gd)->tp_name) == "method_descriptor") {
      slot.kind = ArgKind::Torch;
      slot.data_ptr = dp;    // the type holds them; we keep our own reference too
      slot.get_device = gd;
      Py_INCREF(reinterpret_cast<PyObject*>(t));
    } else {
      Py_XDECREF(dp);
      Py_XDECREF(gd);
    }
    PyErr_Clear();
  } else if (PyObject_CheckBuffer(arg)) {
    slot.kind = ArgKind::Scalar;
  } else if (PyLong_Check(arg)) {
    slot.kind = ArgKind::Int;  // int subclasses such as IntEnum
  } else if (PyFloat_Check(arg)) {
    slot.kind = ArgKind::Float;
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

[[noreturn]] void unsupported(const ParamPacker& p, std::size_t i, PyObject* arg) {
  throw nb::type_error((where(p, i) + ": cannot pass a " + type_name_of(arg) +
                        " to a kernel (expected int, float, bool, a device array, a TensorMap, "
                        "bytes, or a numpy/ctypes scalar)")
                           .c_str());
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
  if (!c.contiguous || !strides) return;
  int64_t expected = 1;
  for (int d = ndim - 1; d >= 0; --d) {
    if (shape[d] == 0) return;
    if (shape[d] != 1 && strides[d] != expected) {
      for (int e = 0; e < d; ++e)
        if (shape[e] == 0) return;
      throw nb::value_error((where(p, i) + ": the tensor must be contiguous").c_str());
    }
    expected *= shape[d];
  }
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
    if (Py_TYPE(arg) != slot.type) [[unlikely]] classify(slot, arg);
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
        PyObject* dev = PyObject_Vectorcall(slot.get_device, &arg, 1, nullptr);
        if (!dev) throw nb::python_error();
        long d = PyLong_AsLong(dev);
        Py_DECREF(dev);
        if (d != device) [[unlikely]]
          try {
            device_pointer(nb::handle(arg), device, "launch");  // raises the precise error
          } catch (const nb::builtin_exception& e) {
            rethrow_at(p, i, e);
          }
        if (slot.checks.any) [[unlikely]] check_slot_slow(p, i, slot.checks, arg);
        PyObject* ptr = PyObject_Vectorcall(slot.data_ptr, &arg, 1, nullptr);
        if (!ptr) throw nb::python_error();
        std::uint64_t v = PyLong_AsUnsignedLongLong(ptr);
        Py_DECREF(ptr);
        p.write_pointer(i, v);
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
        if (slot.checks.any) [[unlikely]]
          check_slot(p, i, slot.checks, view.dtype, view.ndim, view.shape, view.strides);
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
          p.write_bytes(i, slot.bound->update(nb::handle(arg), "tensor map").data(), 128,
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
      default: unsupported(p, i, arg);
    }
  }
}

}  // namespace nanocuda::py
