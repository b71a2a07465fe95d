// GraphMemoryResource and its counters (GraphMemoryResourceAttributes) for Python.
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <stdexcept>
#include <string>

#include "bindings.h"
#include "core/py_device.h"
#include "core/py_memory_resource.h"
#include "core/py_size.h"
#include "interop/interop.h"
#include "nanocuda/core/buffer.h"
#include "nanocuda/core/graph_memory_resource.h"
#include "nanocuda/launch/graph_builder.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

// A live view: each read asks the driver (cuda.core's attributes object reads on access).
struct GraphMemoryView {
  std::shared_ptr<GraphMemoryResource> resource;
};

// The high-water marks can only be reset, by writing 0 (the driver's rule, cuda.core's words).
void set_high(GraphMemoryView& v, nb::handle value, const char* name, void (GraphMemoryResource::*reset)()) {
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr()))
    throw nb::type_error(("GraphMemoryResourceAttributes." + std::string(name) + " must be set to the int 0, got " +
                          Py_TYPE(value.ptr())->tp_name).c_str());
  int overflow = 0;
  long long n = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow || n != 0)
    throw nb::attribute_error(("Attribute '" + std::string(name) + "' may only be set to zero (got " +
                               nb::str(value).c_str() + ").").c_str());
  ((*v.resource).*reset)();
}

[[noreturn]] void read_only(const char* name) {
  throw nb::attribute_error(("attribute '" + std::string(name) +
                             "' of 'GraphMemoryResourceAttributes' objects is not writable").c_str());
}

// The stream of an allocation: a GraphBuilder's own stream (so the Buffer keeps it alive and
// frees there by default; a builder not building gets the resource's non-capturing error),
// else any stream argument.
StreamRef allocation_stream(nb::handle stream, int ordinal) {
  if (nb::isinstance<GraphBuilder>(stream)) return nb::cast<const GraphBuilder&>(stream).stream();
  return stream_for(stream, ordinal, "GraphMemoryResource.allocate");
}

}  // namespace

void bind_graph_memory_resource(nb::module_& m) {
  using View = GraphMemoryView;
  nb::class_<View>(m, "GraphMemoryResourceAttributes",
                   "A device's graph-memory counters in bytes, read when accessed "
                   "(GraphMemoryResource.attributes); the two high-water marks reset when set to 0.")
      .def("__init__", [](View*, nb::args, nb::kwargs) {
             throw std::runtime_error("GraphMemoryResourceAttributes cannot be instantiated directly; "
                                      "use GraphMemoryResource(device).attributes");
           })
      .def_prop_rw("reserved_mem_current",
                   [](const View& v) { return v.resource->attributes().reserved_mem_current; },
                   [](View&, nb::handle) { read_only("reserved_mem_current"); },
                   "Backing memory the driver holds for graphs.")
      .def_prop_rw("reserved_mem_high",
                   [](const View& v) { return v.resource->attributes().reserved_mem_high; },
                   [](View& v, nb::handle x) {
                     set_high(v, x, "reserved_mem_high", &GraphMemoryResource::reset_reserved_mem_high);
                   },
                   "High-water mark of reserved_mem_current; set it to 0 to reset it to the current value.")
      .def_prop_rw("used_mem_current", [](const View& v) { return v.resource->attributes().used_mem_current; },
                   [](View&, nb::handle) { read_only("used_mem_current"); },
                   "Memory the live graph allocations use.")
      .def_prop_rw("used_mem_high", [](const View& v) { return v.resource->attributes().used_mem_high; },
                   [](View& v, nb::handle x) {
                     set_high(v, x, "used_mem_high", &GraphMemoryResource::reset_used_mem_high);
                   },
                   "High-water mark of used_mem_current; set it to 0 to reset it to the current value.")
      .def("__repr__", [](const View& v) {
        GraphMemoryAttributes a = v.resource->attributes();
        return "GraphMemoryResourceAttributes(reserved_mem_current=" + std::to_string(a.reserved_mem_current) +
               ", reserved_mem_high=" + std::to_string(a.reserved_mem_high) +
               ", used_mem_current=" + std::to_string(a.used_mem_current) +
               ", used_mem_high=" + std::to_string(a.used_mem_high) + ")";
      });

  nb::class_<GraphMemoryResource, MemoryResource>(
      m, "GraphMemoryResource",
      "The memory of a device's graphs: allocate() on a building GraphBuilder (or a stream it "
      "captures) records a mem-alloc node, Buffer.close() during the capture a mem-free node. "
      "GraphMemoryResource(device) is the device's one resource (GraphMemoryResource(0) is "
      "GraphMemoryResource(Device(0))). Outside a capture allocate() raises RuntimeError, as "
      "DeviceMemoryResource.allocate does inside one.\n\n"
      "Example::\n\n"
      "    gb = dev.create_graph_builder().begin_building()\n"
      "    buf = nanocuda.GraphMemoryResource(dev).allocate(1024, stream=gb)\n")
      .def(nb::new_([](nb::handle device_id) -> nb::object {
             return nb::cast(GraphMemoryResource::for_device(Device(device_ordinal_arg(device_id, "GraphMemoryResource"))));
           }), nb::arg("device_id"), "The graph memory resource of `device_id` (a Device or an ordinal).")
      .def("allocate", [](std::shared_ptr<GraphMemoryResource> r, nb::handle size, nb::handle stream) {
             std::size_t n = size_arg(size, "GraphMemoryResource.allocate");
             StreamRef s = allocation_stream(stream, r->device_id());
             return wrap_buffer(Buffer(std::move(r), n, s));
           }, nb::arg("size").none(), nb::arg("stream") = nb::none(),
           "A Buffer of `size` bytes recorded into the capture of `stream` (a building GraphBuilder "
           "or a capturing Stream); RuntimeError on a stream that is not capturing.")
      .def_prop_ro("attributes", [](std::shared_ptr<GraphMemoryResource> r) { return View{std::move(r)}; },
                   "The device's graph-memory counters (GraphMemoryResourceAttributes).")
      .def("trim", &GraphMemoryResource::trim,
           "Give the memory cached for graphs and not in use back to the OS (cuDeviceGraphMemTrim).")
      .def("close", [](GraphMemoryResource&) {}, "Does nothing (graph memory has no pool to close; cuda.core's API).");
}

}  // namespace nanocuda::py
