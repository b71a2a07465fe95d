// cuda.core's per-buffer answers: where a Buffer's memory lives (accessibility, device id,
// DLPack device) and the pattern Buffer.fill repeats.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/py_buffer.h"
#include "core/py_size.h"

namespace nb = nanobind;

namespace nanocuda::py {

int resource_device_id(const MemoryResource& mr) {
  try {
    return mr.device_id();
  } catch (nb::python_error&) {
    return -1;  // host resources in cuda.core's examples raise here
  }
}

bool buffer_device_accessible(const PyBuffer& b) {
  if (const auto& mr = b.buffer.memory_resource()) return mr->is_device_accessible();
  return b.external.kind == AddressInfo::Kind::unknown || b.external.device_accessible();
}

bool buffer_host_accessible(const PyBuffer& b) {
  if (const auto& mr = b.buffer.memory_resource()) return mr->is_host_accessible();
  return b.external.kind != AddressInfo::Kind::unknown && b.external.host_accessible();
}

int buffer_device_id(const PyBuffer& b) {
  if (b.external.kind != AddressInfo::Kind::unknown) return b.external.device;
  if (const auto& mr = b.buffer.memory_resource())
    if (resource_device_id(*mr) < 0) return -1;
  return b.buffer.device().ordinal();
}

// Device-only memory is kDLCUDA, host-only kDLCPU; memory both can reach is kDLCUDAManaged
// when managed (its resource says so, or the driver does) and kDLCUDAHost (pinned) otherwise,
// so consumers (numpy for host memory) read it where it lives.
dlpack::Device dlpack_device_of(const PyBuffer& pb) {
  bool device = buffer_device_accessible(pb), host = buffer_host_accessible(pb);
  if (device && !host) return {dlpack::kCUDA, buffer_device_id(pb)};
  if (!device && host) return {dlpack::kCPU, 0};
  if (!device) throw nb::buffer_error("buffer is neither device-accessible nor host-accessible");
  const Buffer& b = pb.buffer;
  bool managed = b.is_managed() || pb.external.kind == AddressInfo::Kind::managed ||
                 (!b.is_closed() && pb.external.kind == AddressInfo::Kind::unknown &&
                  describe_address(b.ptr(), "Buffer.__dlpack_device__").kind == AddressInfo::Kind::managed);
  return managed ? dlpack::Device{dlpack::kCUDAManaged, 0} : dlpack::Device{dlpack::kCUDAHost, 0};
}

// Buffer.fill's pattern: an int is one byte (OverflowError past 0..255; with `width`, that many
// bytes, ValueError past them); a bytes-like object (bytes, a numpy scalar) is its bytes, 1, 2 or 4 of them; a float
// with width=4 is its float32 bits.
std::pair<std::uint32_t, unsigned> fill_pattern(nb::handle value, nb::handle width) {
  unsigned w = width.is_none() ? 0u : static_cast<unsigned>(int_arg(width, "Buffer.fill", "width", 0, 8));
  if (PyLong_CheckExact(value.ptr()) || (PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr()))) {
    unsigned bytes = width.is_none() ? 1u : w;  // a bad width is fill_async's error
    long long hi = bytes >= 4 ? 0xFFFFFFFFLL : (1LL << (8 * bytes)) - 1;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (overflow || v < 0 || v > hi) {
      std::string text = "Buffer.fill: value " + nb::cast<std::string>(nb::repr(value)) + " does not fit in " +
                         std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes") + " (0.." + std::to_string(hi) +
                         "); pass a bytes pattern or width= for wider values";
      if (!width.is_none()) throw nb::value_error(text.c_str());  // an explicit width: a bad value/width pair
      throw std::overflow_error(text);  // OverflowError (nanobind's map): cuda.core's for a byte out of range
    }
    return {static_cast<std::uint32_t>(v), bytes};
  }
  if (PyObject_CheckBuffer(value.ptr()) && !PyUnicode_Check(value.ptr())) {
    Py_buffer view;
    if (PyObject_GetBuffer(value.ptr(), &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
    std::size_t n = static_cast<std::size_t>(view.len);
    std::uint32_t pattern = 0;
    if (n == 1 || n == 2 || n == 4) std::memcpy(&pattern, view.buf, n);
    PyBuffer_Release(&view);
    if (n != 1 && n != 2 && n != 4)
      throw nb::value_error(("Buffer.fill: a pattern of " + std::to_string(n) +
                             " bytes; it must be 1, 2 or 4 bytes long").c_str());
    if (!width.is_none() && w != n)
      throw nb::value_error(("Buffer.fill: width=" + std::to_string(w) + " but the pattern is " + std::to_string(n) +
                             " bytes").c_str());
    return {pattern, static_cast<unsigned>(n)};
  }
  if (PyFloat_Check(value.ptr()) && !width.is_none() && w == 4) {
    float f = static_cast<float>(PyFloat_AsDouble(value.ptr()));
    std::uint32_t bits = 0;
    std::memcpy(&bits, &f, 4);
    return {bits, 4};
  }
  throw nb::type_error(("Buffer.fill: value must be an int (one byte), a bytes-like pattern of 1, 2 or 4 bytes "
                        "(bytes, a numpy scalar) or a float with width=4, got " +
                        std::string(Py_TYPE(value.ptr())->tp_name)).c_str());
}

}  // namespace nanocuda::py
