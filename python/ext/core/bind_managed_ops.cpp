// Python glue for managed-memory range operations (ManagedBuffer, utils.prefetch_batch and
// friends) and utils.copy_batch: locations arrive as (kind, id) pairs from nanocuda._managed_buffer.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "bindings.h"
#include "core/py_buffer.h"
#include "interop/interop.h"
#include "nanocuda/core/managed_ops.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

MemoryLocation location_arg(nb::handle pair, const char* call) {
  return MemoryLocation::from_name(nb::cast<std::string>(pair[0]), nb::cast<int>(pair[1]), call);
}

nb::object location_out(const std::optional<MemoryLocation>& loc) {
  if (!loc) return nb::none();
  return nb::make_tuple(loc->kind_name(), loc->id);
}

ManagedRange range_of(nb::handle buffer, const char* call) {
  if (!nb::isinstance<PyBuffer>(buffer))
    throw nb::type_error((std::string(call) + ": expects a nanocuda.Buffer, got " + Py_TYPE(buffer.ptr())->tp_name).c_str());
  const Buffer& b = nb::cast<const PyBuffer&>(buffer).buffer;
  if (b.is_closed()) throw nb::value_error((std::string(call) + ": " + b.describe() + " is closed").c_str());
  return {b.ptr(), b.size()};
}

std::vector<ManagedRange> ranges_of(nb::handle buffers, const char* call, bool check) {
  std::vector<ManagedRange> out;
  for (nb::handle b : buffers) {
    out.push_back(range_of(b, call));
    if (check) check_managed(out.back().ptr, call);
  }
  return out;
}

std::vector<MemoryLocation> locations_of(nb::handle locations, const char* call) {
  std::vector<MemoryLocation> out;
  for (nb::handle l : locations) out.push_back(location_arg(l, call));
  return out;
}

// Set once at import (nanocuda._managed_buffer); a type object lives as long as the module.
nb::object g_managed_buffer_type;

}  // namespace

nb::object buffer_as(nb::handle cls, nb::handle buffer) {
  if (!PyType_Check(cls.ptr()) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()),
                                                     reinterpret_cast<PyTypeObject*>(nb::type<PyBuffer>().ptr())))
    throw nb::type_error("buffer_as: cls must be a subclass of nanocuda.Buffer");
  if (!nb::isinstance<PyBuffer>(buffer))
    throw nb::type_error("buffer_as: buffer must be a nanocuda.Buffer");
  auto& src = nb::cast<PyBuffer&>(buffer);
  nb::object out = nb::inst_alloc(cls);
  new (nb::inst_ptr<PyBuffer>(out)) PyBuffer(std::move(src));
  nb::inst_mark_ready(out);
  return out;
}

nb::object as_managed_buffer(nb::handle buffer) {
  return g_managed_buffer_type.is_valid() ? buffer_as(g_managed_buffer_type, buffer) : nb::borrow(buffer);
}

void bind_managed_ops(nb::module_& m) {
  nb::module_ in = internal_module(m);
  in.def("managed_prefetch_batch",
         [](nb::handle stream, nb::handle buffers, nb::handle locations, const char* call) {
           StreamRef s = to_stream(stream, call);
           prefetch_batch(ranges_of(buffers, call, true), locations_of(locations, call), s, call);
         },
         nb::arg("stream"), nb::arg("buffers"), nb::arg("locations"), nb::arg("call"),
         "cuMemPrefetchBatchAsync over Buffers; locations: one (kind, id) or one per buffer.");
  in.def("managed_discard_batch",
         [](nb::handle stream, nb::handle buffers, const char* call) {
           StreamRef s = to_stream(stream, call);
           discard_batch(ranges_of(buffers, call, true), s, call);
         },
         nb::arg("stream"), nb::arg("buffers"), nb::arg("call"), "cuMemDiscardBatchAsync over Buffers.");
  in.def("managed_discard_prefetch_batch",
         [](nb::handle stream, nb::handle buffers, nb::handle locations, const char* call) {
           StreamRef s = to_stream(stream, call);
           discard_prefetch_batch(ranges_of(buffers, call, true), locations_of(locations, call), s, call);
         },
         nb::arg("stream"), nb::arg("buffers"), nb::arg("locations"), nb::arg("call"),
         "cuMemDiscardAndPrefetchBatchAsync over Buffers.");
  in.def("copy_batch",
         [](nb::handle stream, nb::handle srcs, nb::handle dsts, nb::handle options, const char* call) {
           StreamRef s = to_stream(stream, call);
           std::vector<BatchCopy> copies;
           nb::list src_list = nb::list(srcs), dst_list = nb::list(dsts);
           for (std::size_t i = 0; i < src_list.size() && i < dst_list.size(); ++i) {
             ManagedRange from = range_of(src_list[i], call), to = range_of(dst_list[i], call);
             copies.push_back({to.ptr, from.ptr, from.size, to.size});
           }
           std::vector<BatchCopyAttributes> attrs;
           for (nb::handle o : options) {  // (access order name, src hint, dst hint, prefer overlap)
             BatchCopyAttributes a;
             a.src_access_order = src_access_order_from_name(nb::cast<std::string>(o[0]), call);
             if (!o[1].is_none()) a.src_hint = location_arg(o[1], call);
             if (!o[2].is_none()) a.dst_hint = location_arg(o[2], call);
             a.prefer_overlap = nb::cast<bool>(o[3]);
             attrs.push_back(a);
           }
           copy_batch(copies, attrs, s, call);
         },
         nb::arg("stream"), nb::arg("srcs"), nb::arg("dsts"), nb::arg("options"), nb::arg("call"),
         "cuMemcpyBatchAsync over paired Buffers; options: one (order, src hint, dst hint, overlap) or one per copy.");
  in.def("managed_advise",
         [](nb::handle buffer, const std::string& advice, nb::handle location, const char* call) {
           ManagedRange r = range_of(buffer, call);
           check_managed(r.ptr, call);
           std::optional<MemoryLocation> loc;
           if (!location.is_none()) loc = location_arg(location, call);
           advise(r, advice_from_name(advice, call), loc, call);
         },
         nb::arg("buffer"), nb::arg("advice"), nb::arg("location").none(), nb::arg("call"),
         "cuMemAdvise on a Buffer's range by advice name.");
  in.def("managed_range_attribute",
         [](nb::handle buffer, const std::string& what, const char* call) -> nb::object {
           ManagedRange r = range_of(buffer, call);
           check_managed(r.ptr, call);
           if (what == "read_mostly") return nb::bool_(range_read_mostly(r));
           if (what == "preferred_location") return location_out(range_preferred_location(r));
           if (what == "last_prefetch_location") return location_out(range_last_prefetch_location(r));
           if (what == "accessed_by") {
             nb::list out;
             for (const auto& loc : range_accessed_by(r)) out.append(location_out(loc));
             return out;
           }
           throw nb::value_error((std::string(call) + ": unknown range attribute '" + what + "'").c_str());
         },
         nb::arg("buffer"), nb::arg("what"), nb::arg("call"),
         "A managed range's read_mostly, preferred_location, accessed_by or last_prefetch_location.");
  in.def("buffer_as", &buffer_as, nb::arg("cls"), nb::arg("buffer"),
         "Move a Buffer's memory into a new instance of a Buffer subclass.");
  in.def("set_managed_buffer_type", [](nb::handle cls) { g_managed_buffer_type = nb::borrow(cls); },
         nb::arg("cls"), "The class ManagedMemoryResource.allocate returns (nanocuda.ManagedBuffer).");
}

}  // namespace nanocuda::py
