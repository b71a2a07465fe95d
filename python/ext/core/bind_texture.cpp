// `_nanocuda._internal.texture`: CUDA arrays, resource descriptions, texture and surface objects (glue
// for the nanocuda.texture package, which gives them cuda.core's classes and names).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bindings.h"
#include "core/py_buffer.h"
#include "interop/interop.h"
#include "nanocuda/core/opaque_array.h"
#include "nanocuda/core/stream.h"
#include "nanocuda/core/texture_object.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

nb::tuple shape_tuple(const ArrayShape& s) {
  nb::list l;
  for (std::size_t e : s.extent) l.append(e);
  return nb::tuple(l);
}

// cuda.core takes a Stream or a GraphBuilder (both speak __cuda_stream__) and says so.
StreamRef copy_stream(nb::handle stream, const char* call) {
  if (!is_stream_like(stream))
    throw nb::type_error((std::string(call) + ": stream: Stream or GraphBuilder expected, got " +
                          Py_TYPE(stream.ptr())->tp_name).c_str());
  StreamRef s = to_stream(stream, call);
  if (s.is_closed()) throw nb::value_error((std::string(call) + ": the stream is closed").c_str());
  return s;
}

// The other side of a whole-array copy: a nanocuda Buffer (device memory) or any contiguous
// buffer-protocol object (host memory, writable for copy_to).
void array_copy(const OpaqueArray& a, nb::handle other, nb::handle stream, bool to_array) {
  const char* call = to_array ? "OpaqueArray.copy_from" : "OpaqueArray.copy_to";
  StreamRef s = copy_stream(stream, call);
  if (nb::isinstance<PyBuffer>(other)) {
    const Buffer& b = nb::cast<PyBuffer&>(other).buffer;
    if (to_array) a.copy_from_device(b.ptr(), b.size(), s);
    else a.copy_to_device(b.ptr(), b.size(), s);
    return;
  }
  Py_buffer view;
  if (PyObject_GetBuffer(other.ptr(), &view, (to_array ? PyBUF_SIMPLE : PyBUF_WRITABLE)) != 0) {
    PyErr_Clear();
    throw nb::type_error((std::string(call) + ": " + (to_array ? "src" : "dst") + " must be a Buffer or a " +
                          (to_array ? "" : "writable ") + "contiguous buffer-protocol object, got " +
                          Py_TYPE(other.ptr())->tp_name).c_str());
  }
  struct Release {  // the view goes back on every path out
    Py_buffer* v;
    ~Release() { PyBuffer_Release(v); }
  } release{&view};
  if (to_array) a.copy_from_host(view.buf, static_cast<std::size_t>(view.len), s);
  else a.copy_to_host(view.buf, static_cast<std::size_t>(view.len), s);
}

const Buffer& linear_buffer(nb::handle buffer, const char* call) {
  if (!nb::isinstance<PyBuffer>(buffer))
    throw nb::type_error((std::string(call) + ": buffer must be a Buffer, got " + Py_TYPE(buffer.ptr())->tp_name).c_str());
  const Buffer& b = nb::cast<PyBuffer&>(buffer).buffer;
  if (b.is_closed()) throw nb::value_error((std::string(call) + ": the Buffer is closed").c_str());
  return b;
}

std::array<float, 4> border(const std::vector<double>& v) {
  if (v.size() != 4)
    throw nb::value_error(("Device.create_texture_object: border_color must have 4 entries (r, g, b, a), got " +
                           std::to_string(v.size())).c_str());
  return {static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2]), static_cast<float>(v[3])};
}

}  // namespace

void bind_texture(nb::module_& m) {
  nb::module_ t = internal_module(m).def_submodule("texture", "CUDA arrays, textures and surfaces; use nanocuda.texture.");

  nb::class_<OpaqueArray>(t, "Array", "A CUDA array (nanocuda.texture.OpaqueArray holds one).")
      .def_prop_ro("handle", [](const OpaqueArray& a) { return reinterpret_cast<std::uintptr_t>(a.handle()); })
      .def_prop_ro("shape", [](const OpaqueArray& a) { return shape_tuple(a.shape()); })
      .def_prop_ro("format", [](const OpaqueArray& a) { return std::string(array_format_name(a.shape().format)); })
      .def_prop_ro("num_channels", [](const OpaqueArray& a) { return a.shape().num_channels; })
      .def_prop_ro("element_bytes", [](const OpaqueArray& a) { return a.shape().element_bytes(); })
      .def_prop_ro("size_bytes", [](const OpaqueArray& a) { return a.shape().size_bytes(); })
      .def_prop_ro("is_surface_load_store", [](const OpaqueArray& a) { return a.shape().surface_load_store; })
      .def_prop_ro("device_id", [](const OpaqueArray& a) { return a.device().ordinal(); })
      .def_prop_ro("is_closed", &OpaqueArray::is_closed)
      .def("close", &OpaqueArray::close)
      .def("copy_from", [](const OpaqueArray& a, nb::handle src, nb::handle stream) { array_copy(a, src, stream, true); },
           nb::arg("src"), nb::arg("stream").none())
      .def("copy_to", [](const OpaqueArray& a, nb::handle dst, nb::handle stream) { array_copy(a, dst, stream, false); },
           nb::arg("dst"), nb::arg("stream").none())
      .def("__repr__", &OpaqueArray::describe);

  nb::class_<MipmappedArray>(t, "Mipmapped", "A CUDA mipmapped array (nanocuda.texture.MipmappedArray holds one).")
      .def_prop_ro("handle", [](const MipmappedArray& a) { return reinterpret_cast<std::uintptr_t>(a.handle()); })
      .def_prop_ro("shape", [](const MipmappedArray& a) { return shape_tuple(a.shape()); })
      .def_prop_ro("format", [](const MipmappedArray& a) { return std::string(array_format_name(a.shape().format)); })
      .def_prop_ro("num_channels", [](const MipmappedArray& a) { return a.shape().num_channels; })
      .def_prop_ro("num_levels", &MipmappedArray::num_levels)
      .def_prop_ro("is_surface_load_store", [](const MipmappedArray& a) { return a.shape().surface_load_store; })
      .def_prop_ro("device_id", [](const MipmappedArray& a) { return a.device().ordinal(); })
      .def_prop_ro("is_closed", &MipmappedArray::is_closed)
      .def("close", &MipmappedArray::close)
      .def("level", &MipmappedArray::level, nb::arg("level"))
      .def("__repr__", &MipmappedArray::describe);

  t.def("create_array", [](int device, const std::vector<long long>& shape, const std::string& format,
                           long long channels, bool surface) {
         const char* call = "Device.create_opaque_array";
         return OpaqueArray::create(Device(device), make_array_shape(shape, array_format_from_name(format, call),
                                                                     channels, surface, call));
       });
  t.def("create_mipmapped", [](int device, const std::vector<long long>& shape, const std::string& format,
                               long long channels, bool surface, long long levels) {
         const char* call = "Device.create_mipmapped_array";
         ArrayShape s = make_array_shape(shape, array_format_from_name(format, call), channels, surface, call);
         return MipmappedArray::create(Device(device), s, levels);
       });
  t.def("check_format", [](const std::string& format, const char* call) {
         return std::string(array_format_name(array_format_from_name(format, call)));
       });

  nb::class_<ResourceDesc>(t, "Resource", "What a texture or surface reads (nanocuda.texture.ResourceDescriptor).")
      .def_prop_ro("kind", [](const ResourceDesc& r) { return std::string(r.kind_name()); })
      .def_prop_ro("format", [](const ResourceDesc& r) { return std::string(array_format_name(r.format())); })
      .def_prop_ro("num_channels", &ResourceDesc::num_channels)
      .def_prop_ro("size_bytes", &ResourceDesc::size_bytes)
      .def_prop_ro("width", &ResourceDesc::width)
      .def_prop_ro("height", &ResourceDesc::height)
      .def_prop_ro("pitch_bytes", &ResourceDesc::pitch_bytes)
      .def("__repr__", &ResourceDesc::describe);
  t.def("resource_from_array", &ResourceDesc::from_array);
  t.def("resource_from_mipmapped", &ResourceDesc::from_mipmapped_array);
  t.def("resource_from_linear", [](nb::handle buffer, const std::string& format, long long channels,
                                   std::optional<long long> size_bytes) {
    const char* call = "ResourceDescriptor.from_linear";
    const Buffer& b = linear_buffer(buffer, call);
    return ResourceDesc::from_linear(b.ptr(), b.size(), b.device().ordinal(), array_format_from_name(format, call),
                                     channels, size_bytes);
  }, nb::arg("buffer"), nb::arg("format"), nb::arg("channels"), nb::arg("size_bytes").none());
  t.def("resource_from_pitch2d", [](nb::handle buffer, const std::string& format, long long channels, long long width,
                                    long long height, long long pitch) {
    const char* call = "ResourceDescriptor.from_pitch2d";
    const Buffer& b = linear_buffer(buffer, call);
    return ResourceDesc::from_pitch2d(b.ptr(), b.size(), b.device().ordinal(), array_format_from_name(format, call),
                                      channels, width, height, pitch);
  });

  nb::class_<TextureObject>(t, "Texture", "A CUtexObject (nanocuda.texture.TextureObject holds one).")
      .def_prop_ro("handle", [](const TextureObject& o) { return static_cast<std::uint64_t>(o.handle()); })
      .def_prop_ro("device_id", [](const TextureObject& o) { return o.device().ordinal(); })
      .def("close", &TextureObject::close);
  nb::class_<SurfaceObject>(t, "Surface", "A CUsurfObject (nanocuda.texture.SurfaceObject holds one).")
      .def_prop_ro("handle", [](const SurfaceObject& o) { return static_cast<std::uint64_t>(o.handle()); })
      .def_prop_ro("device_id", [](const SurfaceObject& o) { return o.device().ordinal(); })
      .def("close", &SurfaceObject::close);

  // Options arrive as names (the Python enums' values); the core checks each.
  t.def("create_texture", [](int device, const ResourceDesc& r, const std::vector<std::string>& address_modes,
                             const std::string& filter_mode, const std::string& read_mode, bool normalized_coords,
                             bool srgb, bool disable_trilinear, bool seamless_cubemap, long long max_anisotropy,
                             const std::string& mipmap_filter_mode, double bias, double min_clamp, double max_clamp,
                             const std::optional<std::vector<double>>& border_color) {
    const char* call = "Device.create_texture_object";
    TextureOptions o;
    for (std::size_t i = 0; i < 3 && i < address_modes.size(); ++i)
      o.address_mode[i] = address_mode_from_name(address_modes[i], call, "address_mode[" + std::to_string(i) + "]");
    o.filter_mode = filter_mode_from_name(filter_mode, call, "filter_mode");
    o.read_normalized_float = read_mode_is_normalized_float(read_mode, call);
    o.normalized_coords = normalized_coords;
    o.srgb = srgb;
    o.disable_trilinear_optimization = disable_trilinear;
    o.seamless_cubemap = seamless_cubemap;
    o.max_anisotropy = max_anisotropy;
    o.mipmap_filter_mode = filter_mode_from_name(mipmap_filter_mode, call, "mipmap_filter_mode");
    o.mipmap_level_bias = static_cast<float>(bias);
    o.min_mipmap_level_clamp = static_cast<float>(min_clamp);
    o.max_mipmap_level_clamp = static_cast<float>(max_clamp);
    if (border_color) o.border_color = border(*border_color);
    return TextureObject(r, o, Device(device));
  });
  t.def("create_surface", [](int device, const ResourceDesc& r) { return SurfaceObject(r, Device(device)); });
}

}  // namespace nanocuda::py
