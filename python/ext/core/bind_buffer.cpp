// Python bindings for Buffer and PinnedBuffer, with DLPack and CUDA-array-interface export,
// and stream-ordered copy/fill between any two array-likes.
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "bindings.h"
#include "interop/interop.h"
#include "nanocuda/core/copy.h"
#include "nanocuda/core/event.h"
#include "nanocuda/core/pinned_buffer.h"
#include "nanocuda/core/wait_hooks.h"
#include "core/py_buffer.h"
#include "core/py_device.h"
#include "core/py_memory_resource.h"
#include "core/py_size.h"
#include "core/seen_buffers.h"
#include "nanocuda/core/peer_access.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

// The address as a Python int, noted so a raw MemoryResource.deallocate of it is refused.
uint64_t address_for_python(const PyBuffer& b) {
  auto address = static_cast<uint64_t>(b.buffer.ptr());
  note_address_read(b);
  return address;
}

// One dimension: an int or anything with __index__ (numpy's ints), never a bool.
int64_t dimension_of(nb::handle d) {
  if (PyBool_Check(d.ptr()) || !PyIndex_Check(d.ptr()))
    throw nb::type_error(("Buffer: each dimension of shape must be an int, got " +
                          nb::cast<std::string>(nb::repr(d))).c_str());
  nb::object i = nb::steal(PyNumber_Index(d.ptr()));
  if (!i.is_valid()) throw nb::python_error();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow) throw nb::value_error(("Buffer: dimension " + nb::cast<std::string>(nb::repr(d)) + " of shape is too large").c_str());
  return v;
}

std::vector<int64_t> shape_of(nb::handle shape, std::size_t nbytes, const DType& dtype) {
  std::vector<int64_t> out;
  if (shape.is_none()) {
    out.push_back(static_cast<int64_t>(nbytes / dtype.itemsize()));
  } else if (PyIndex_Check(shape.ptr()) && !PyBool_Check(shape.ptr())) {
    out.push_back(dimension_of(shape));
  } else if (PySequence_Check(shape.ptr()) && !PyUnicode_Check(shape.ptr()) && !PyBytes_Check(shape.ptr())) {
    for (auto s : shape) out.push_back(dimension_of(s));
  } else {
    throw nb::type_error(("Buffer: shape must be an int or a sequence of ints, got " +
                          std::string(Py_TYPE(shape.ptr())->tp_name)).c_str());
  }
  return out;
}

std::size_t product(const std::vector<int64_t>& shape) {
  std::size_t n = 1;
  for (int64_t s : shape) {
    if (s < 0) throw nb::value_error("Buffer: negative dimension in shape");
    n *= static_cast<std::size_t>(s);
  }
  return n;
}

// The address and size of anything copy() accepts: device arrays, host arrays (numpy,
// anything with the buffer protocol), PinnedBuffers, ints (then `size` is required).
struct Span {
  CUdeviceptr ptr;
  std::size_t size;  // 0 when unknown (raw int)
};

// `writable`: a destination, never read-only (bytes, read-only numpy/CUDA array interface).
Span span_of(nb::handle obj, const char* where, bool writable) {
  if (nb::isinstance<PinnedBuffer>(obj)) {
    auto& p = nb::cast<PinnedBuffer&>(obj);
    return {reinterpret_cast<CUdeviceptr>(p.ptr()), p.size()};
  }
  if (PyLong_Check(obj.ptr())) return {size_arg(obj, where, "address"), 0};
  if (PyObject_CheckBuffer(obj.ptr()) && !has_device_pointer(obj)) {
    Py_buffer view;
    if (PyObject_GetBuffer(obj.ptr(), &view, writable ? PyBUF_WRITABLE : PyBUF_SIMPLE) != 0) {
      if (!writable) throw nb::python_error();
      PyErr_Clear();
      throw nb::value_error((std::string(where) + ": the " + Py_TYPE(obj.ptr())->tp_name + " is read-only").c_str());
    }
    Span s{reinterpret_cast<CUdeviceptr>(view.buf), static_cast<std::size_t>(view.len)};
    PyBuffer_Release(&view);  // `obj` keeps the memory alive for the call
    return s;
  }
  ArrayView v = describe_array(obj, where);
  if (writable && v.readonly)
    throw nb::value_error((std::string(where) + ": the " + Py_TYPE(obj.ptr())->tp_name + " is marked read-only").c_str());
  if (!v.is_contiguous())
    throw nb::value_error((std::string(where) + ": the array is not contiguous").c_str());
  return {static_cast<CUdeviceptr>(v.ptr), static_cast<std::size_t>(v.nbytes())};
}

StreamRef stream_or(nb::handle stream, const PyBuffer* hint, const char* where) {
  if (!stream.is_none()) return to_stream(stream, where);
  if (hint) return hint->buffer.stream();
  return StreamRef::default_for(Device());
}

bool finalizing() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

PyBuffer& as_buffer(nb::handle obj, const char* call, const char* what) {
  if (!nb::isinstance<PyBuffer>(obj))
    throw nb::type_error((std::string(call) + ": " + what + " must be a nanocuda.Buffer, got " +
                          Py_TYPE(obj.ptr())->tp_name).c_str());
  return nb::cast<PyBuffer&>(obj);
}

}  // namespace

void bind_buffer(nb::module_& m) {
  // The core's waits for the device (syncs, frees that wait, also in destructors) drop the GIL,
  // which a pending Python host callback needs; not while the interpreter finalizes (only its
  // own thread may take the GIL back then).
  set_wait_hooks({[]() noexcept -> void* {
                    return Py_IsInitialized() && PyGILState_Check() && !finalizing() ? PyEval_SaveThread() : nullptr;
                  },
                  [](void* state) noexcept {
                    if (state) PyEval_RestoreThread(static_cast<PyThreadState*>(state));
                  }});
  nb::class_<PyBuffer>(m, "Buffer",
                       "Device memory from the device's stream-ordered pool. Exports __dlpack__ "
                       "and __cuda_array_interface__, so torch.from_dlpack(buf) and "
                       "cupy.asarray(buf) see the same memory.\n\n"
                       "Example::\n\n"
                       "    buf = nanocuda.Buffer(4 * n, stream=stream, dtype=\"float32\")\n"
                       "    nanocuda.copy(buf, numpy_array, stream=stream)\n"
                       "    t = torch.from_dlpack(buf)  # same memory, no copy\n",
                       nb::is_weak_referenceable())
      .def("__init__",
           [](PyBuffer* self, nb::handle size_obj, nb::handle stream, nb::handle device,
              nb::handle dtype, nb::handle shape) {
             std::size_t size = size_arg(size_obj, "Buffer");
             DType dt = dtype.is_none() ? DType{} : parse_dtype(dtype);
             StreamRef s = !stream.is_none()
                            ? to_stream(stream, "Buffer")
                            : StreamRef::default_for(Device(device_ordinal_arg(device, "Buffer")));
             if (!stream.is_none() && !device.is_none())
               check_same_device("Buffer", "the stream", s.device().ordinal(), "device=",
                                 device_ordinal_arg(device, "Buffer"));
             std::vector<int64_t> sh = shape_of(shape, size, dt);
             if (!shape.is_none() && product(sh) * dt.itemsize() > size)
               throw nb::value_error(("Buffer: shape needs " + std::to_string(product(sh) * dt.itemsize()) +
                                      " bytes but size is " + std::to_string(size)).c_str());
             // Through the device's memory resource (Device.memory_resource), like Device.allocate.
             auto mr = MemoryResource::for_device(s.device());
             Buffer b = dynamic_cast<PyMemoryResource*>(mr.get())
                            ? std::move(nb::cast<PyBuffer&>(allocate_on_device(s.device(), size_obj, stream_object(s))).buffer)
                            : Buffer(std::move(mr), size, s);
             new (self) PyBuffer(std::move(b), dt, std::move(sh));
           },
           nb::arg("size").none(), nb::kw_only(), nb::arg("stream") = nb::none(),
           nb::arg("device") = nb::none(), nb::arg("dtype") = nb::none(),
           nb::arg("shape") = nb::none(),
           "`size` bytes of device memory, allocated in the order of `stream` (default: the "
           "legacy stream of `device`). `dtype` and `shape` say how it is exported.")
      .def_prop_ro("ptr", [](const PyBuffer& b) { return address_for_python(b); },
                   "The device address as an int.")
      .def_prop_ro("size", [](const PyBuffer& b) { return b.buffer.size(); }, "Size in bytes.")
      .def_prop_ro("nbytes", [](const PyBuffer& b) { return b.buffer.size(); }, "Size in bytes.")
      .def_prop_ro("device", [](const PyBuffer& b) { return device_object(b.buffer.device().ordinal()); },
                   "The Device holding the memory.")
      .def_prop_ro("device_id", &buffer_device_id,
                   "The ordinal of the device holding the memory; -1 for host memory (cuda.core).")
      .def_prop_ro("handle", [](const PyBuffer& b) { return b.buffer.is_closed() ? uint64_t{0} : address_for_python(b); },
                   "The address as an int (cuda.core's name for ptr); 0 once closed.")
      .def_prop_ro("memory_resource", [](const PyBuffer& b) { return b.buffer.memory_resource(); },
                   "The MemoryResource that made the memory (None for a view of foreign memory).")
      .def_prop_ro("is_device_accessible", &buffer_device_accessible, "True when kernels can read the memory.")
      .def_prop_ro("is_host_accessible", &buffer_host_accessible,
                   "True when the CPU can read the memory (pinned, managed, host memory from from_handle).")
      .def("copy_to", [](nb::handle self, nb::handle dst, nb::handle stream) -> nb::object {
             auto& b = nb::cast<PyBuffer&>(self);
             nb::object out = nb::borrow(dst);
             if (!stream.is_none()) (void)to_stream(stream, "Buffer.copy_to");  // checked before any allocation
             if (dst.is_none()) {  // a new buffer from the same resource (or the device's)
               nb::object s = stream.is_none() ? stream_object(b.buffer.stream()) : nb::borrow(stream);
               const auto& mr = b.buffer.memory_resource();
               out = mr ? nb::cast(mr).attr("allocate")(b.buffer.size(), nb::arg("stream") = s)
                        : allocate_on_device(b.buffer.device(), nb::int_(b.buffer.size()), s);
             }
             PyBuffer& d = as_buffer(out, "Buffer.copy_to", "dst");
             if (stream.is_none()) b.buffer.copy_to(d.buffer);
             else b.buffer.copy_to(d.buffer, to_stream(stream, "Buffer.copy_to"));
             return out;
           }, nb::arg("dst") = nb::none(), nb::kw_only(), nb::arg("stream") = nb::none(),
           "Copy this buffer into `dst` (a new buffer when None) in the order of `stream`; returns dst.")
      .def("copy_from", [](PyBuffer& b, nb::handle src, nb::handle stream) {
             const Buffer& from = as_buffer(src, "Buffer.copy_from", "src").buffer;
             if (stream.is_none()) b.buffer.copy_from(from);
             else b.buffer.copy_from(from, to_stream(stream, "Buffer.copy_from"));
           }, nb::arg("src").none(), nb::kw_only(), nb::arg("stream") = nb::none(),
           "Copy `src` (a Buffer of the same size) into this buffer in the order of `stream`.")
      .def("fill", [](PyBuffer& b, nb::handle value, nb::handle width, nb::handle stream) {
             auto [pattern, w] = fill_pattern(value, width);
             StreamRef s = stream.is_none() ? b.buffer.stream() : to_stream(stream, "Buffer.fill");
             fill_async(b.buffer.ptr(), pattern, w, b.buffer.size(), s);
           }, nb::arg("value").none(), nb::arg("width") = nb::none(), nb::kw_only(), nb::arg("stream") = nb::none(),
           "Repeat a pattern over the buffer in the order of `stream` (cuda.core): an int byte "
           "(0..255), a bytes-like pattern of 1, 2 or 4 bytes (b'\\x34\\x12', numpy.uint16(v)), or an "
           "int/float with width=2/4. ValueError when the size is not a multiple of the pattern.")
      .def_static("from_handle", [](nb::handle ptr, nb::handle size, nb::handle mr, nb::handle owner,
                                    nb::handle stream) {
             uint64_t address = handle_arg(ptr, "Buffer.from_handle", "ptr");
             std::size_t n = size_arg(size, "Buffer.from_handle");
             std::shared_ptr<MemoryResource> resource;
             if (!mr.is_none()) {
               if (!nb::isinstance<MemoryResource>(mr))
                 throw nb::type_error(("Buffer.from_handle: mr must be a nanocuda.MemoryResource or None, got " +
                                       std::string(Py_TYPE(mr.ptr())->tp_name)).c_str());
               if (!owner.is_none())
                 throw nb::value_error("Buffer.from_handle: mr= (which frees the memory) and owner= (which holds "
                                       "it) cannot be both specified together");
               resource = resource_arg(mr, "Buffer.from_handle", "mr");
             }
             // Foreign memory: the driver says where it lives (host, pinned, managed, a device).
             AddressInfo where = resource ? AddressInfo{} : describe_address(address, "Buffer.from_handle");
             int mr_device = resource ? resource_device_id(*resource) : where.device;
             int ordinal = mr_device >= 0 ? mr_device : device_ordinal_arg(nb::none(), "Buffer.from_handle");
             StreamRef s = stream.is_none() ? StreamRef::default_for(Device(ordinal)) : to_stream(stream, "Buffer.from_handle");
             if (!stream.is_none() && resource && mr_device >= 0)
               check_same_device("Buffer.from_handle", "the stream", s.device().ordinal(), "mr", ordinal);
             Buffer b = Buffer::adopt(static_cast<CUdeviceptr>(address), n, s, resource);
             PyBuffer out(std::move(b), DType{}, Shape(static_cast<int64_t>(n)), nb::borrow(owner));
             out.external = where;
             return out;
           }, nb::arg("ptr").none(), nb::arg("size").none(), nb::arg("mr") = nb::none(), nb::arg("owner") = nb::none(),
           nb::kw_only(), nb::arg("stream") = nb::none(),
           "A Buffer over memory at `ptr` (cuda.core): freed through `mr` at close() in the order of "
           "`stream`, never when mr is None; `owner` (not with mr) is kept alive as long as the Buffer.")
      .def_prop_ro("owner", [](const PyBuffer& b) { return b.owner.is_valid() ? b.owner : nb::none(); },
                   "The object from_handle(owner=) keeps alive with the memory; None otherwise.")
      .def_prop_ro("is_managed", [](const PyBuffer& b) { return b.buffer.is_managed(); },
                   "True for managed (unified) memory, from a ManagedMemoryResource.")
      .def_prop_ro("is_mapped", [](const PyBuffer& b) { return b.buffer.is_mapped(); },
                   "True when the memory is mapped from another process (Buffer.from_ipc_descriptor).")
      .def("set_deallocation_stream", [](PyBuffer& b, nb::handle stream) {
             if (stream.is_none())
               throw nb::type_error("Buffer.set_deallocation_stream: stream must be a Stream, got None");
             b.buffer.set_deallocation_stream(to_stream(stream, "Buffer.set_deallocation_stream"));
           }, nb::arg("stream").none(),
           "Free the memory in the order of `stream` (at close() without a stream, or on garbage "
           "collection) instead of the allocating stream. Orders nothing: work using the buffer "
           "must already be ordered before `stream`.")
      .def_prop_ro("stream", [](const PyBuffer& b) { return PyStream::of(b.buffer.stream()); },
                   "The Stream the memory is freed in the order of: the allocating one unless "
                   "set_deallocation_stream changed it.")
      .def_prop_ro("dtype", [](const PyBuffer& b) { return b.dtype.name; },
                   "Element type name seen by DLPack/CUDA-array-interface consumers ('uint8' by default).")
      .def_prop_ro("shape", [](const PyBuffer& b) {
        nb::list l;
        for (int64_t s : b.shape) l.append(s);
        return nb::tuple(l);
      }, "Shape seen by DLPack/CUDA-array-interface consumers (1-D by default).")
      .def_prop_ro("is_closed", [](const PyBuffer& b) { return b.buffer.is_closed(); },
                   "True once close() has freed the memory.")
      .def("close", [](PyBuffer& b, nb::handle stream) {
             if (stream.is_none()) b.buffer.close();
             else b.buffer.close(to_stream(stream, "Buffer.close"));
           }, nb::arg("stream") = nb::none(),
           "Free the memory in the order of `stream` (default: the allocating stream).")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PyBuffer& b, nb::args) {
        b.buffer.close();
        b.owner = nb::object();  // as close(): the owner is released with the memory
      })
      .def("__len__", [](const PyBuffer& b) { return b.buffer.size(); })
      .def("__dlpack_device__", [](const PyBuffer& b) {
        dlpack::Device d = dlpack_device_of(b);
        return nb::make_tuple(static_cast<int>(d.device_type), d.device_id);
      })
      .def("__dlpack__",
           [](nb::handle self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
              nb::handle copy) {
             auto& b = nb::cast<PyBuffer&>(self);
             // The protocol's own wording (consumers match on it).
             if (!copy.is_none() && bool_arg(copy, "Buffer.__dlpack__", "copy (True, False or None)"))
               throw nb::buffer_error("Sorry, not supported: copy=True");
             if (!dl_device.is_none()) throw nb::buffer_error("Sorry, not supported: dl_device other than None");
             if (!max_version.is_none() &&
                 (!PyTuple_Check(max_version.ptr()) || PyTuple_GET_SIZE(max_version.ptr()) != 2 ||
                  !PyLong_Check(PyTuple_GET_ITEM(max_version.ptr(), 0)) ||
                  !PyLong_Check(PyTuple_GET_ITEM(max_version.ptr(), 1))))
               throw nb::buffer_error(("Expected max_version tuple[int, int], got " +
                                       nb::cast<std::string>(nb::repr(max_version))).c_str());
             dlpack::Device where = dlpack_device_of(b);
             // Order the consumer's stream after our allocating stream, as the protocol asks.
             if (std::optional<StreamRef> consumer = dlpack_consumer_stream(stream, b.buffer.device().ordinal()))
               if (consumer->raw_handle() != b.buffer.stream().raw_handle()) consumer->wait(b.buffer.stream());
             return export_dlpack(self, reinterpret_cast<void*>(b.buffer.ptr()), where, b.dtype, b.shape,
                                  max_version);
           },
           nb::kw_only(), nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(),
           nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none())
      .def_prop_ro("__cuda_array_interface__", [](const PyBuffer& b) {
        nb::dict d;
        nb::list shape;
        for (int64_t s : b.shape) shape.append(s);
        d["shape"] = nb::tuple(shape);
        d["typestr"] = b.dtype.typestr;
        d["data"] = nb::make_tuple(address_for_python(b), false);
        d["strides"] = nb::none();
        d["version"] = 3;
        // Consumers sync on this stream before reading (protocol v3).
        CUstream s = b.buffer.stream().raw_handle();
        d["stream"] = s == nullptr ? nb::object(nb::none()) : nb::object(nb::int_(reinterpret_cast<uint64_t>(s)));
        return d;
      });

  nb::class_<PinnedBuffer>(m, "PinnedBuffer", "Page-locked host memory; numpy.frombuffer(p.memoryview(), dtype) "
                                              "views it.")
      .def("__init__", [](PinnedBuffer* self, nb::handle size, nb::handle device) {
             std::size_t n = size_arg(size, "PinnedBuffer");
             new (self) PinnedBuffer(n, Device(device_ordinal_arg(device, "PinnedBuffer")));
           }, nb::arg("size").none(), nb::kw_only(), nb::arg("device") = nb::none())
      .def_prop_ro("ptr", [](const PinnedBuffer& p) { return reinterpret_cast<uint64_t>(p.ptr()); },
                   "The host address as an int.")
      .def_prop_ro("size", &PinnedBuffer::size, "Size in bytes.")
      .def_prop_ro("is_closed", &PinnedBuffer::is_closed, "True once close() has freed the memory.")
      .def("close", &PinnedBuffer::close, "Free the memory now (also on garbage collection).")
      .def("__len__", &PinnedBuffer::size)
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__exit__", [](PinnedBuffer& p, nb::args) { p.close(); })
      .def("memoryview", [](nb::handle self) {
             auto& p = nb::cast<PinnedBuffer&>(self);
             PyObject* mv = PyMemoryView_FromMemory(static_cast<char*>(p.ptr()),
                                                    static_cast<Py_ssize_t>(p.size()), PyBUF_WRITE);
             return nb::steal(mv);
           }, "A writable memoryview of the bytes (valid until close()).");

  m.def("copy",
        [](nb::handle dst, nb::handle src, nb::handle size, nb::handle stream) {
          const PyBuffer* hint = nb::isinstance<PyBuffer>(dst)   ? &nb::cast<PyBuffer&>(dst)
                                 : nb::isinstance<PyBuffer>(src) ? &nb::cast<PyBuffer&>(src)
                                                                 : nullptr;
          StreamRef s = stream_or(stream, hint, "copy");
          Span d = span_of(dst, "copy (dst)", true), sr = span_of(src, "copy (src)", false);
          std::size_t n = size.is_none() ? std::min(d.size ? d.size : sr.size, sr.size ? sr.size : d.size)
                                         : size_arg(size, "copy");
          if (size.is_none() && d.size && sr.size && d.size != sr.size)
            throw nb::value_error(("copy: dst has " + std::to_string(d.size) + " bytes but src has " +
                                   std::to_string(sr.size) + "; pass size= to copy a prefix").c_str());
          // Two raw ints say nothing about size; an array or Buffer of 0 bytes is a copy of nothing.
          const bool raw_ints = PyLong_Check(dst.ptr()) && PyLong_Check(src.ptr());
          if (n == 0 && size.is_none() && raw_ints)
            throw nb::value_error("copy: size is unknown for raw int addresses; pass size=");
          if ((d.size && n > d.size) || (sr.size && n > sr.size))
            throw nb::value_error(("copy: size " + std::to_string(n) + " exceeds dst (" +
                                   std::to_string(d.size) + " bytes) or src (" +
                                   std::to_string(sr.size) + " bytes)").c_str());
          if (n == 0) return;  // empty arrays (their pointers may be null): nothing to do
          if (nb::isinstance<PyBuffer>(dst) && nb::isinstance<PyBuffer>(src))  // the core picks peer or local
            nb::cast<PyBuffer&>(dst).buffer.copy_from(nb::cast<PyBuffer&>(src).buffer, n, s);
          else
            copy_async(d.ptr, sr.ptr, n, s);
        },
        nb::arg("dst").none(), nb::arg("src").none(), nb::kw_only(), nb::arg("size") = nb::none(),
        nb::arg("stream") = nb::none(),
        "Copy bytes from `src` to `dst` in the order of `stream`. Either side may be device "
        "memory (Buffer, torch/CuPy tensor, DLPack object), host memory (numpy array, "
        "bytearray, PinnedBuffer) or an int address. Copies from pageable host memory return "
        "only once the data has been read.");

  internal_module(m).def("array_view",
        [](nb::handle obj, const char* where, bool cai) {
          // StridedMemoryView's reader: one C++ pass over DLPack / CUDA array interface.
          ArrayView v = cai ? describe_array(obj, where) : describe_array_dlpack(obj, where);
          nb::list shape, strides;
          for (int64_t s : v.shape) shape.append(s);
          for (int64_t s : v.strides) strides.append(s);
          return nb::make_tuple(v.ptr, v.device_type, v.device_id, v.dtype.name, v.dtype.itemsize(),
                                nb::tuple(shape), nb::tuple(strides), v.is_contiguous(), v.readonly);
        },
        nb::arg("obj"), nb::arg("where"), nb::arg("cai") = false,
        "(ptr, DLPack device type, device id, dtype name, itemsize, shape, strides in elements, "
        "C-contiguous, read-only) of an array (StridedMemoryView's reader).");

  m.def("memset",
        [](nb::handle dst, nb::handle value_obj, nb::handle size, nb::handle stream) {
          const PyBuffer* hint = nb::isinstance<PyBuffer>(dst) ? &nb::cast<PyBuffer&>(dst) : nullptr;
          auto value = int_arg(value_obj, "memset", "value (a byte)", 0, 255);
          // Never past the destination's extent (unknown for a raw address) nor into read-only memory.
          std::optional<std::size_t> have = extent_of(dst, "memset");
          std::size_t n = have ? *have : 0;
          if (!size.is_none()) n = size_arg(size, "memset");
          else if (!have) throw nb::value_error("memset: pass size= for a raw address");
          if (have && n > *have)
            throw nb::value_error(("memset: size " + std::to_string(n) + " is past the end of the destination (" +
                                   std::to_string(*have) + " bytes)").c_str());
          StreamRef s = stream_or(stream, hint, "memset");
          if (hint && !stream.is_none())
            check_same_device("memset", "the stream", s.device().ordinal(), "the buffer", hint->buffer.device().ordinal());
          uint64_t ptr = device_pointer(dst, s.device().ordinal(), "memset");
          memset_async(ptr, static_cast<unsigned char>(value), n, s);
        },
        nb::arg("dst").none(), nb::arg("value").none(), nb::kw_only(), nb::arg("size") = nb::none(),
        nb::arg("stream") = nb::none(), "Fill device memory with a byte value, in stream order.");
}

}  // namespace nanocuda::py
