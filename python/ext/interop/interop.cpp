// Reading foreign arrays and streams; per-type decisions cached for the launch hot path.
#include "interop/interop.h"

#include <nanobind/stl/string.h>

#include <optional>
#include <type_traits>
#include <string>

#include "nanocuda/core/address_device.h"
#include "core/py_buffer.h"
#include "core/py_size.h"
#include "fastpath/cupy_array.h"
#include "fastpath/torch_tensor.h"
#include "fastpath/type_cache.h"
#include "interop/dlpack_exchange.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

[[noreturn]] void raise_value(const std::string& text) { throw nb::value_error(text.c_str()); }
[[noreturn]] void raise_type(const std::string& text) { throw nb::type_error(text.c_str()); }

std::string py_type_name(nb::handle obj) {
  return nb::cast<std::string>(nb::str(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(obj.ptr())))
                                           .attr("__qualname__")));
}

const char* device_type_name(int32_t type) {
  switch (type) {
    case dlpack::kCPU: return "the CPU";
    case dlpack::kCUDAHost: return "pinned host memory";
    case dlpack::kCUDA: return "CUDA";
    case dlpack::kCUDAManaged: return "CUDA managed memory";
    default: return "a non-CUDA device";
  }
}

// The device of a raw CUDA address, for protocols that do not carry it.
int32_t device_of_pointer(uint64_t ptr, const char* where) {
  std::optional<int> ordinal = device_of_address(ptr, where);
  if (!ordinal)
    raise_value(std::string(where) + ": address 0x" + std::to_string(ptr) +
                " is not memory the CUDA driver knows (a host pointer?)");
  return *ordinal;
}

// Kinds of objects; decided once per Python type.
// Cupy: a CuPy array, otherwise read as Cai but for the device pointer (cupy_array.h).
enum class Kind { Unknown, Buffer, Int, Torch, Cai, Cupy, Dlpack, DataPtr, Host };

TypeCache<Kind, 16> g_kinds;

// hasattr for the array interfaces that keeps what a raising property (anything but
// AttributeError) said: PyObject_HasAttr would swallow it and call the object "not an array".
bool has_interface(nb::handle obj, const char* name, std::optional<nb::python_error>& raised) {
  PyObject* v = PyObject_GetAttrString(obj.ptr(), name);
  if (v) {
    Py_DECREF(v);
    return true;
  }
  if (!PyErr_ExceptionMatches(PyExc_AttributeError) && !raised) raised.emplace();  // takes the error
  PyErr_Clear();
  return false;
}

void parse_interface(nb::handle obj, const char* attr, ArrayView& v);
Kind cai_kind(nb::handle obj);

Kind classify(nb::handle obj) {
  PyTypeObject* t = Py_TYPE(obj.ptr());
  if (const Kind* k = g_kinds.find(t)) return *k;
  Kind k = Kind::Unknown;
  // A raising interface property is passed on only when no other protocol reads the object:
  // a torch tensor that requires grad refuses __cuda_array_interface__ yet has data_ptr.
  std::optional<nb::python_error> raised;
  if (nb::isinstance<PyBuffer>(obj)) k = Kind::Buffer;
  else if (PyLong_Check(obj.ptr())) k = Kind::Int;
  else if (torch::is_tensor(obj.ptr())) k = Kind::Torch;
  else if (has_interface(obj, "__cuda_array_interface__", raised)) k = cai_kind(obj);
  else if (nb::hasattr(obj, "__dlpack__")) k = Kind::Dlpack;
  else if (nb::hasattr(obj, "data_ptr")) k = Kind::DataPtr;
  else if (has_interface(obj, "__array_interface__", raised)) k = Kind::Host;
  if (k == Kind::Unknown && raised) raised->restore(), throw nb::python_error();
  if (k != Kind::Unknown) g_kinds.put(t, k);
  return k;
}

void parse_interface_fields(nb::handle obj, const char* attr, ArrayView& v);

// Cupy when CuPy's own attributes give the interface's pointer for this first object seen.
Kind cai_kind(nb::handle obj) {
  ArrayView v;
  try {
    parse_interface(obj, "__cuda_array_interface__", v);
  } catch (const nb::builtin_exception&) {
    return Kind::Cai;  // reported where the interface is read
  } catch (const nb::python_error&) {
    return Kind::Cai;
  }
  return cupy::is_array(obj.ptr(), v.ptr) ? Kind::Cupy : Kind::Cai;
}

// A malformed interface (data=None, a shape of strings...) is a TypeError naming the
// attribute and the expected form, not nanobind's std::bad_cast.
void parse_interface(nb::handle obj, const char* attr, ArrayView& v) {
  try {
    parse_interface_fields(obj, attr, v);
  } catch (const nb::cast_error&) {
    raise_type(py_type_name(obj) + "." + attr + " is malformed: expected a dict with "
               "'data': (int address, bool), 'typestr': str, 'shape': tuple of ints and "
               "optional 'strides': tuple of ints or None");
  }
}

void parse_interface_fields(nb::handle obj, const char* attr, ArrayView& v) {
  nb::dict d = nb::cast<nb::dict>(obj.attr(attr));
  nb::tuple data = nb::cast<nb::tuple>(d["data"]);
  v.ptr = nb::cast<uint64_t>(data[0]);
  v.readonly = data.size() > 1 && PyObject_IsTrue(data[1].ptr()) == 1;
  v.dtype = dtype_from_typestr(nb::cast<std::string>(d["typestr"]));
  for (auto s : nb::cast<nb::tuple>(d["shape"])) v.shape.push_back(nb::cast<int64_t>(s));
  nb::object strides = d.contains("strides") ? nb::object(d["strides"]) : nb::none();
  if (strides.is_none()) {
    v.strides = compact_strides(v.shape);
  } else {
    for (auto s : nb::cast<nb::tuple>(strides)) {
      int64_t bytes = nb::cast<int64_t>(s);
      if (bytes % v.dtype.itemsize() != 0)
        raise_value(std::string("stride of ") + std::to_string(bytes) +
                    " bytes is not a multiple of the element size");
      v.strides.push_back(bytes / v.dtype.itemsize());
    }
  }
}

// Copies a capsule's tensor description into `v`, then hands the tensor back: we only
// borrowed a view, and the producing object keeps the memory alive.
template <class Managed>
void read_capsule(nb::handle capsule, const char* name, const char* used_name, ArrayView& v) {
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule.ptr(), name));
  const dlpack::Tensor& t = m->dl_tensor;
  v.ptr = reinterpret_cast<uint64_t>(t.data) + t.byte_offset;
  v.device_type = t.device.device_type;
  v.device_id = t.device.device_id;
  v.dtype = dtype_from_dlpack(t.dtype);
  v.shape.assign(t.shape, t.shape + t.ndim);
  v.strides = t.strides ? std::vector<int64_t>(t.strides, t.strides + t.ndim)
                        : compact_strides(v.shape);
  if constexpr (std::is_same_v<Managed, dlpack::ManagedTensorVersioned>)
    v.readonly = (m->flags & dlpack::kFlagReadOnly) != 0;
  if (m->deleter) m->deleter(m);
  PyCapsule_SetName(capsule.ptr(), used_name);
}

// Reads a DLPack capsule (either version) into `v` and releases the producer's tensor.
void parse_dlpack(nb::handle obj, ArrayView& v, const char* where) {
  nb::object capsule;
  try {
    capsule = obj.attr("__dlpack__")(nb::arg("max_version") = nb::make_tuple(1, 0));
  } catch (nb::python_error& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    capsule = obj.attr("__dlpack__")();  // a pre-1.0 producer
  }
  if (PyCapsule_IsValid(capsule.ptr(), "dltensor_versioned")) {
    read_capsule<dlpack::ManagedTensorVersioned>(capsule, "dltensor_versioned",
                                                 "used_dltensor_versioned", v);
  } else if (PyCapsule_IsValid(capsule.ptr(), "dltensor")) {
    read_capsule<dlpack::ManagedTensor>(capsule, "dltensor", "used_dltensor", v);
  } else {
    raise_type(std::string(where) + ": __dlpack__ of " + py_type_name(obj) +
               " returned something that is not a DLPack capsule");
  }
}

void parse_torch(nb::handle obj, ArrayView& v) {
  // The launch path's reader when torch has one (its exchange API, or the torch C ABI reader
  // / bridge that replaces it): one C read instead of five Python calls.
  if (TensorViewReader read = exchange_reader(Py_TYPE(obj.ptr()))) {
    dlpack::Tensor t;
    if (read(obj.ptr(), &t) != 0) throw nb::python_error();
    v.ptr = reinterpret_cast<uint64_t>(t.data) + t.byte_offset;
    v.device_type = t.device.device_type;
    v.device_id = t.device.device_id;
    v.dtype = dtype_from_dlpack(t.dtype);
    v.shape.assign(t.shape, t.shape + t.ndim);
    v.strides = t.strides ? std::vector<int64_t>(t.strides, t.strides + t.ndim) : compact_strides(v.shape);
    return;
  }
  v.ptr = torch::data_ptr(obj.ptr());
  long dev = torch::device(obj.ptr());
  v.device_type = dev < 0 ? dlpack::kCPU : dlpack::kCUDA;
  v.device_id = dev < 0 ? 0 : static_cast<int32_t>(dev);
  v.dtype = parse_dtype(torch::dtype(obj.ptr()));
  for (auto s : torch::shape(obj.ptr())) v.shape.push_back(nb::cast<int64_t>(s));
  for (auto s : torch::stride(obj.ptr())) v.strides.push_back(nb::cast<int64_t>(s));
}

ArrayView describe(nb::handle obj, const char* where, bool locate_device);

void check_device(int32_t type, int32_t id, int device, const char* where, nb::handle obj) {
  if (type != dlpack::kCUDA && type != dlpack::kCUDAManaged) [[unlikely]]
    raise_value(std::string(where) + ": expected device memory, but the " + py_type_name(obj) +
                " lives in " + device_type_name(type) + " (not device-accessible: move it to the GPU first)");
  if (device >= 0 && id != device) [[unlikely]]
    raise_value(std::string(where) + ": the " + py_type_name(obj) + " is on device " +
                std::to_string(id) + ", but this call runs on device " + std::to_string(device));
}

}  // namespace

ArrayView describe_array(nb::handle obj, const char* where) {
  return describe(obj, where, true);
}

ArrayView describe_array_dlpack(nb::handle obj, const char* where) {
  Kind k = classify(obj);
  if ((k == Kind::Cai || k == Kind::Cupy || k == Kind::DataPtr || k == Kind::Host) &&
      nb::hasattr(obj, "__dlpack__")) {
    ArrayView v;  // CuPy: its DLPack export names what its interface cannot (bfloat16)
    parse_dlpack(obj, v, where);
    return v;
  }
  return describe(obj, where, true);
}

ArrayView describe_array_geometry(nb::handle obj, const char* where) {
  return describe(obj, where, false);
}

bool is_torch_tensor(nb::handle obj) { return classify(obj) == Kind::Torch; }

namespace {

ArrayView describe(nb::handle obj, const char* where, bool locate_device) {
  ArrayView v;
  switch (classify(obj)) {
    case Kind::Buffer: {
      // classify() saw a Buffer (or subclass) instance: its pointer directly, without
      // nb::cast's type lookup (a few hundred instructions per Graph.update/launch argument).
      auto& b = nb::inst_ready(obj) ? *nb::inst_ptr<PyBuffer>(obj) : nb::cast<PyBuffer&>(obj);
      v.ptr = b.buffer.ptr();
      v.device_id = b.buffer.device().ordinal();
      v.dtype = b.dtype;
      v.shape = b.shape.vector();
      v.strides = compact_strides(v.shape);
      return v;
    }
    case Kind::Torch: parse_torch(obj, v); return v;
    case Kind::Cupy:
    case Kind::Cai:
      parse_interface(obj, "__cuda_array_interface__", v);
      v.device_id = !locate_device ? -1 : v.ptr ? device_of_pointer(v.ptr, where) : 0;
      return v;
    case Kind::Dlpack: parse_dlpack(obj, v, where); return v;
    case Kind::Host:
      parse_interface(obj, "__array_interface__", v);
      v.device_type = dlpack::kCPU;
      return v;
    default:
      raise_type(std::string(where) + ": expected an array (a nanocuda Buffer, a torch or CuPy "
                 "tensor, or an object with __dlpack__ or __cuda_array_interface__), got " +
                 py_type_name(obj));
  }
}

}  // namespace

uint64_t device_pointer(nb::handle obj, int device, const char* where, bool allow_int) {
  switch (classify(obj)) {
    case Kind::Buffer: {
      // classify() saw a Buffer (or subclass) instance: its pointer directly, without
      // nb::cast's type lookup (a few hundred instructions per Graph.update/launch argument).
      auto& b = nb::inst_ready(obj) ? *nb::inst_ptr<PyBuffer>(obj) : nb::cast<PyBuffer&>(obj);
      check_device(dlpack::kCUDA, b.buffer.device().ordinal(), device, where, obj);
      return b.buffer.ptr();
    }
    case Kind::Int: {
      if (!allow_int) break;
      uint64_t p = PyLong_AsUnsignedLongLong(obj.ptr());
      if (p == static_cast<uint64_t>(-1) && PyErr_Occurred()) [[unlikely]]  // < 0 or past 64 bits: say so, named
        return PyErr_Clear(), size_arg(obj, where, "a device address");  // (not Python's bare OverflowError)
      return p;
    }
    case Kind::Torch: {
      // Two C-level method calls; no dicts or capsules on this path.
      long d = torch::device(obj.ptr());
      check_device(d < 0 ? dlpack::kCPU : dlpack::kCUDA, static_cast<int32_t>(d), device, where,
                   obj);
      return torch::data_ptr(obj.ptr());
    }
    case Kind::Cupy: {
      int d = -1;
      uint64_t p = cupy::pointer(obj.ptr(), &d);
      if (p) check_device(dlpack::kCUDA, d, device, where, obj);
      return p;
    }
    case Kind::Cai: {
      ArrayView v;
      parse_interface(obj, "__cuda_array_interface__", v);
      if (v.ptr) check_device(dlpack::kCUDA, device_of_pointer(v.ptr, where), device, where, obj);
      return v.ptr;
    }
    case Kind::Dlpack: {
      ArrayView v;
      parse_dlpack(obj, v, where);
      check_device(v.device_type, v.device_id, device, where, obj);
      return v.ptr;
    }
    case Kind::DataPtr: {
      uint64_t p = nb::cast<uint64_t>(obj.attr("data_ptr")());
      if (p) check_device(dlpack::kCUDA, device_of_pointer(p, where), device, where, obj);
      return p;
    }
    case Kind::Host:
      raise_value(std::string(where) + ": expected device memory, but the " + py_type_name(obj) +
                  " lives in host memory (move it to the GPU first)");
    default: break;
  }
  raise_type(std::string(where) + ": expected a device pointer (a nanocuda Buffer, a torch or "
             "CuPy tensor, a __dlpack__ or __cuda_array_interface__ object" +
             (allow_int ? ", or an int address" : "") + "), got " + py_type_name(obj));
}

std::optional<std::size_t> extent_of(nb::handle obj, const char* where) {
  switch (classify(obj)) {
    case Kind::Int: return std::nullopt;
    case Kind::Buffer: return nb::cast<PyBuffer&>(obj).buffer.size();
    case Kind::DataPtr: return std::nullopt;
    default: {
      ArrayView v = describe_array_geometry(obj, where);
      if (v.readonly)
        raise_value(std::string(where) + ": the " + py_type_name(obj) + " is marked read-only");
      return static_cast<std::size_t>(v.nbytes());
    }
  }
}

bool has_device_pointer(nb::handle obj) {
  Kind k = classify(obj);
  return k == Kind::Buffer || k == Kind::Torch || k == Kind::Cai || k == Kind::Cupy ||
         k == Kind::Dlpack || k == Kind::DataPtr;
}

namespace {

// A handle read from a stream object: an int that fits in 64 bits (never a bool).
uint64_t stream_handle_int(nb::handle v, const std::string& where, const char* what) {
  if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr()))
    raise_type(where + ": " + what + " must give an int handle, got " + py_type_name(v));
  unsigned long long h = PyLong_AsUnsignedLongLong(v.ptr());
  if (h == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    raise_value(where + ": " + what + " gave " + nb::str(v).c_str() + ", not a 64-bit handle");
  }
  return h;
}

}  // namespace

// The one conversion of Python objects to streams. A bare int is refused: an int is not a
// stream, and a wrong one crashes the driver; adopting a raw handle is Stream.from_handle(h).
StreamRef to_stream(nb::handle obj, const char* where) {
  if (nb::isinstance<PyStream>(obj)) return nb::cast<const PyStream&>(obj).ref(where);  // a closed one refused there
  std::string call(where);
  if (PyLong_Check(obj.ptr()))
    raise_type(call + ": stream must be a Stream (or a torch/CuPy stream, or an object with "
               "__cuda_stream__), got the int " + nb::str(obj).c_str() +
               "; wrap a raw CUstream handle with nanocuda.Stream.from_handle(h)");
  uint64_t handle = 0;
  if (nb::hasattr(obj, "__cuda_stream__")) {
    nb::object t = call_cuda_stream(obj, call);
    // The protocol: (version 0, handle int).
    if (!PyTuple_Check(t.ptr()) || PyTuple_GET_SIZE(t.ptr()) != 2)
      raise_type(call + ": " + py_type_name(obj) + ".__cuda_stream__() must return a (version, handle) "
                 "tuple of 2 ints, got " + nb::repr(t).c_str());
    nb::handle version = PyTuple_GET_ITEM(t.ptr(), 0);
    if (!PyLong_Check(version.ptr()) || PyBool_Check(version.ptr()) || PyLong_AsLong(version.ptr()) != 0) {
      PyErr_Clear();
      raise_value(call + ": " + py_type_name(obj) + ".__cuda_stream__() gave protocol version " +
                  nb::repr(version).c_str() + "; nanocuda reads version 0");
    }
    handle = stream_handle_int(PyTuple_GET_ITEM(t.ptr(), 1), call, "__cuda_stream__()");
  } else if (nb::hasattr(obj, "cuda_stream")) {  // torch.cuda.Stream
    handle = stream_handle_int(obj.attr("cuda_stream"), call, "cuda_stream");
  } else {
    raise_type(call + ": expected a stream (nanocuda.Stream, torch.cuda.Stream or an object with "
               "__cuda_stream__), got " + py_type_name(obj));
  }
  return StreamRef::from_handle(reinterpret_cast<CUstream>(handle));
}

// Per type (decided once): a type with __cuda_stream__ that is not nanocuda's (Stream,
// GraphBuilder), cuda.core's (code moving from it may still hold its streams), or torch's or
// CuPy's (streams nanocuda documents as stream arguments).
static TypeCache<bool, 8> g_foreign_stream_types;

void warn_foreign_stream(nb::handle obj) {
  PyTypeObject* t = Py_TYPE(obj.ptr());
  const bool* foreign = g_foreign_stream_types.find(t);
  if (!foreign) {
    bool warn = !nb::isinstance<PyStream>(obj) && nb::hasattr(nb::handle(reinterpret_cast<PyObject*>(t)), "__cuda_stream__");
    if (warn) {
      nb::object module = nb::getattr(nb::handle(reinterpret_cast<PyObject*>(t)), "__module__", nb::none());
      std::string name = nb::isinstance<nb::str>(module) ? nb::cast<std::string>(module) : std::string();
      for (const char* own : {"nanocuda", "cuda.core", "torch", "cupy"}) warn = warn && name.rfind(own, 0) != 0;
    }
    foreign = &g_foreign_stream_types.put(t, warn);
  }
  if (!*foreign) return;  // not foreign; errors (no protocol at all) are to_stream's
  if (PyErr_WarnEx(PyExc_DeprecationWarning,
                   "Passing foreign stream objects to this function via the stream protocol is deprecated. "
                   "Convert the object explicitly using Stream(obj) instead. (nanocuda: Stream.adopt(obj).)",
                   1) != 0)
    throw nb::python_error();  // warnings turned into errors
}

// The consumer's stream of __dlpack__(stream=...), as the DLPack standard defines it for CUDA:
// None or -1: no ordering; 1: the legacy default stream; 2: the per-thread one; a larger int:
// the consumer's CUstream handle. 0 is ambiguous (the standard forbids it), and an int that
// cannot be a handle (unaligned, in the first 64 KiB) is refused rather than handed to the
// driver. (cuda.core 1.2 ignores the argument; nanocuda orders, as the standard asks.)
std::optional<StreamRef> dlpack_consumer_stream(nb::handle stream, int ordinal) {
  if (stream.is_none()) return std::nullopt;
  if (!PyLong_Check(stream.ptr()) || PyBool_Check(stream.ptr())) {
    if (is_stream_like(stream)) return to_stream(stream, "Buffer.__dlpack__");
    throw nb::type_error(("Buffer.__dlpack__: stream must be an int (DLPack) or None, got " +
                          std::string(Py_TYPE(stream.ptr())->tp_name)).c_str());
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(stream.ptr(), &overflow);
  unsigned long long h = overflow > 0 ? PyLong_AsUnsignedLongLong(stream.ptr()) : static_cast<unsigned long long>(v);
  if (PyErr_Occurred()) PyErr_Clear();
  if (overflow == 0 && v == -1) return std::nullopt;
  if (overflow == 0 && v == 0)
    throw nb::value_error("Buffer.__dlpack__: stream=0 is ambiguous for CUDA (the DLPack standard forbids it): "
                          "pass 1 (legacy default stream), 2 (per-thread default stream), a stream handle, or -1");
  if (overflow < 0 || v < -1)
    throw nb::value_error(("Buffer.__dlpack__: stream " + std::string(nb::str(stream).c_str()) +
                           " is not a DLPack stream (None, -1, 1, 2 or a CUstream handle)").c_str());
  if (h > 2 && (h < 0x10000 || h % 8 != 0))
    throw nb::value_error(("Buffer.__dlpack__: stream " + std::string(nb::str(stream).c_str()) +
                           " cannot be a CUstream handle (handles are aligned addresses)").c_str());
  return StreamRef::from_handle(reinterpret_cast<CUstream>(h), ordinal);
}

}  // namespace nanocuda::py
