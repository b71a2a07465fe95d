// Python bindings for Stream and Event: creation, adoption of foreign streams, __cuda_stream__
// export, and cuda.core's names (record(event, options), wait(event_or_stream), end - start).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings.h"
#include "core/py_device.h"
#include "core/py_size.h"
#include "core/py_stream.h"
#include "interop/interop.h"
#include "nanocuda/core/event.h"
#include "nanocuda/driver/error.h"
#include "nanocuda/core/stream.h"

namespace nb = nanobind;

namespace nanocuda::py {

void PyStream::close() {
  if (owner_) return owner_->close();
  if (foreign_closed_) return;
  ref_.sync();  // as closing an owned stream: its work is done first
  foreign_closed_ = true;
}

void PyStream::throw_closed(const char* call) const {
  throw ValueError(call, "the stream is closed (" + ref_.describe() + ")");
}

bool is_stream_like(nb::handle obj, bool torch) {
  return nb::isinstance<PyStream>(obj) || nb::hasattr(obj, "__cuda_stream__") || (torch && nb::hasattr(obj, "cuda_stream"));
}

nb::object stream_object(StreamRef stream) { return nb::cast(PyStream::of(stream)); }

PyStream adopt_stream(nb::handle obj, const char* where) {
  if (nb::isinstance<PyStream>(obj)) return nb::cast<const PyStream&>(obj);
  return PyStream(to_stream(obj, where));  // foreign: to_stream never makes an owner
}

void bind_stream(nb::module_& m) {
  nb::class_<PyStream>(m, "Stream", "A CUDA stream; owned (made here) or foreign (adopted; never destroyed here).\n\n"
                                  "Example::\n\n"
                                  "    stream = nanocuda.Stream()              # a new stream on the current device\n"
                                  "    s = nanocuda.Stream.adopt(torch.cuda.current_stream())\n"
                                  "    stream.sync()\n",
                  nb::is_weak_referenceable())
      .def("__init__",
           [](PyStream* self, nb::object device, nb::handle non_blocking, nb::handle priority) {
             Device dev(device_ordinal_arg(device, "Stream"));
             if (!PyBool_Check(non_blocking.ptr()))
               throw nb::type_error(("Stream: non_blocking must be a bool, got " +
                                     std::string(Py_TYPE(non_blocking.ptr())->tp_name)).c_str());
             int p = static_cast<int>(int_arg(priority, "Stream", "priority", -1024, 1024));
             new (self) PyStream(Stream::create(dev, non_blocking.ptr() == Py_True, p));
           },
           nb::kw_only(), nb::arg("device") = nb::none(), nb::arg("non_blocking").none() = true,
           nb::arg("priority").none() = 0,
           "A new stream on `device` (a Device or ordinal; default 0). Lower priority numbers "
           "run first.")
      .def_static("from_handle",
                  [](nb::handle handle_obj, nb::object device) {
                    uint64_t handle = handle_arg(handle_obj, "Stream.from_handle", "handle");
                    int ordinal = device_ordinal_arg(device, "Stream.from_handle", -1);
                    return PyStream(StreamRef::from_handle(reinterpret_cast<CUstream>(handle), ordinal));
                  },
                  nb::arg("handle").none(), nb::arg("device") = nb::none(),
                  "Adopt a raw CUstream handle (an int, or cuda.bindings' CUstream) without owning it: the one "
                  "way a bare int "
                  "becomes a stream.")
      .def_static("adopt", [](nb::handle obj) { return adopt_stream(obj, "Stream.adopt"); },
                  nb::arg("obj").none(),
                  "Adopt a foreign stream: torch.cuda.Stream or any __cuda_stream__ object (a raw "
                  "handle int: Stream.from_handle).")
      .def_static("legacy", [](nb::handle d) { return PyStream(StreamRef::legacy(Device(device_ordinal_arg(d, "Stream.legacy")))); },
                  nb::arg("device").none() = nb::none(), "The legacy default stream of `device`.")
      .def_static("per_thread", [](nb::handle device) {
                    return PyStream(StreamRef::per_thread(Device(device_ordinal_arg(device, "Stream.per_thread"))));
                  }, nb::arg("device") = nb::none(),
                  "The per-thread default stream of `device` (default: the current device).")
      .def_prop_ro("handle", [](const PyStream& s) { return reinterpret_cast<uint64_t>(s.ref("Stream.handle").handle()); },
                   "The CUstream handle as an int.")
      .def_prop_ro("device", [](const PyStream& s) { return device_object(s.unchecked().device_ordinal()); },
                   "The Device this stream belongs to.")
      .def_prop_ro("context", [](const PyStream& s) { return s.unchecked().context(); }, "The stream's Context.")
      .def_prop_ro("is_owned", &PyStream::is_owned, "True when nanocuda created it (and destroys it on close).")
      .def_prop_ro("is_closed", &PyStream::is_closed, "True after close().")
      .def_prop_ro("priority", [](const PyStream& s) { return s.ref("Stream.priority").priority(); },
                   "Scheduling priority (lower numbers run first).")
      .def_prop_ro("is_non_blocking", [](const PyStream& s) { return s.ref("Stream.is_non_blocking").is_non_blocking(); },
                   "True when it does not synchronize with the legacy default stream.")
      .def_prop_ro("is_nonblocking", [](const PyStream& s) { return s.ref("Stream.is_nonblocking").is_non_blocking(); },
                   "cuda.core's name for is_non_blocking.")
      .def("sync", [](const PyStream& s) { s.ref("Stream.sync").sync(); }, "Block until all queued work is done.")
      .def("query", [](const PyStream& s) { return s.ref("Stream.query").query(); }, "True when all queued work has completed.")
      .def("wait", [](const PyStream& ps, nb::handle event_or_stream) {
             StreamRef s = ps.ref("Stream.wait");
             if (nb::isinstance<Event>(event_or_stream)) return s.wait(nb::cast<const Event&>(event_or_stream));
             // Neither an Event nor stream-like: a ValueError, as cuda.core raises for this argument.
             // (Ints and None keep to_stream's TypeErrors, which say how to adopt a raw handle.)
             if (!event_or_stream.is_none() && !PyLong_Check(event_or_stream.ptr()) &&
                 !is_stream_like(event_or_stream, /*torch=*/true))
               throw nb::value_error(("Stream.wait: event_or_stream must be a nanocuda.Event or a stream (a "
                                      "nanocuda.Stream, torch.cuda.Stream or an object with __cuda_stream__), got " +
                                      std::string(Py_TYPE(event_or_stream.ptr())->tp_name)).c_str());
             s.wait(to_stream(event_or_stream, "Stream.wait"));
           }, nb::arg("event_or_stream").none(),
           "Make future work wait for an Event, or for all work queued so far on a stream "
           "(anything with __cuda_stream__).")
      .def("record", [](const PyStream& ps, nb::handle event, nb::handle options, bool timing) -> nb::object {
             StreamRef s = ps.ref("Stream.record");
             if (!event.is_none()) {
               if (!nb::isinstance<Event>(event))
                 throw nb::type_error(("Stream.record: event must be a nanocuda.Event or None, got " +
                                       std::string(Py_TYPE(event.ptr())->tp_name)).c_str());
               if (!options.is_none())  // options only make a new event: silently dropping them would surprise
                 throw nb::value_error("Stream.record: options make a new Event; pass an event or options, not both");
               nb::cast<Event&>(event).record(s);
               return nb::borrow(event);
             }
             Event e = event_from_options(s.device(), options, "Stream.record", timing, /*bound=*/true, &s.context());
             e.record(s);
             return nb::cast(std::move(e));
           }, nb::arg("event") = nb::none(), nb::arg("options") = nb::none(), nb::kw_only(),
           nb::arg("timing") = false,
           "Record `event` here (or a new Event made from EventOptions `options`; timing=True "
           "is short for enable_timing) and return it.")
      .def("close", &PyStream::close, "Wait for the stream's work, then destroy it (if owned).")
      .def("__enter__", [](PyStream& s) -> PyStream& { return s; }, nb::rv_policy::reference)
      .def("__exit__", [](PyStream& s, nb::args) { s.close(); })
      .def("__cuda_stream__", [](const PyStream& s) {
             return nb::make_tuple(0, reinterpret_cast<uint64_t>(s.ref("Stream.__cuda_stream__").handle()));
           }, "The CUDA stream protocol: (version, handle).")
      .def("__eq__", [](const PyStream& a, nb::handle b) {
        return nb::isinstance<PyStream>(b) && a.unchecked().raw_handle() == nb::cast<const PyStream&>(b).unchecked().raw_handle();
      })
      .def("__hash__", [](const PyStream& s) { return reinterpret_cast<uint64_t>(s.unchecked().raw_handle()); });
}

void bind_event(nb::module_& m) {
  nb::class_<Event>(m, "Event", "A CUDA event: a marker in a stream, for ordering and timing.",
                   nb::is_weak_referenceable())
      .def("__init__",
           [](Event* self, nb::object device, bool timing, bool blocking_sync) {
             Device dev(device_ordinal_arg(device, "Event"));
             new (self) Event(dev, timing, blocking_sync);
           },
           nb::kw_only(), nb::arg("device") = nb::none(), nb::arg("timing") = true,
           nb::arg("blocking_sync") = false)
      .def("record", [](Event& e, nb::handle stream) { e.record(to_stream(stream, "Event.record")); },
           nb::arg("stream").none(), "Record on `stream`.")
      .def("sync", &Event::sync, "Block until the recorded work is done.")
      .def("query", &Event::query, "True once the recorded work has completed.")
      .def("elapsed_time", [](const Event& start, const Event& end) {
             return end.elapsed_time_since(start);
           }, nb::arg("end"), "Milliseconds from this event to `end` (torch's convention).")
      .def("close", &Event::close,
           "Destroy the event now (safe to call twice); later uses raise ValueError. cuda.core's name.")
      .def_prop_ro("is_closed", &Event::is_closed, "True after close().")
      .def("__enter__", [](Event& e) -> Event& { return e; }, nb::rv_policy::reference)
      .def("__exit__", [](Event& e, nb::args) { e.close(); })
      .def_prop_ro("is_timing", &Event::is_timing, "True when it records time (elapsed_time works).")
      .def_prop_ro("is_timing_enabled", &Event::is_timing, "cuda.core 1.2's name for is_timing.")
      .def_prop_ro("is_blocking_sync", &Event::is_blocking_sync,
                   "True when sync() yields the CPU (CU_EVENT_BLOCKING_SYNC) instead of spinning.")
      .def_prop_ro("handle", [](const Event& e) {
                     return reinterpret_cast<uint64_t>(e.checked_handle("Event.handle"));
                   }, "The CUevent handle as an int.")
      .def_prop_ro("device", [](const Event& e) -> nb::object {
                     if (e.is_imported()) return nb::none();  // cuda.core: another process's event
                     return device_object(e.device().ordinal());
                   }, "The Device this event belongs to (None when opened from another process).")
      .def_prop_ro("context", [](const Event& e) -> nb::object {
                     if (e.is_imported()) return nb::none();
                     return nb::cast(e.context());
                   }, "The event's Context (None when opened from another process).")
      .def_prop_ro("is_timing_disabled", [](const Event& e) { return !e.is_timing(); },
                   "cuda.core's name: True when the event records no time.")
      .def_prop_ro("is_sync_busy_waited", &Event::is_blocking_sync,
                   "Older cuda.core name for is_blocking_sync (EventOptions.busy_waited_sync).")
      .def_prop_ro("is_ipc_enabled", &Event::is_interprocess, "True for an event shareable between processes.")
      .def_prop_ro("is_done", &Event::query, "True once the recorded work has completed.")
      .def("__sub__", [](const Event& end, const Event& start) { return end.elapsed_time_since(start); },
           nb::is_operator(), nb::arg("start"), "end - start: milliseconds between two timing events (cuda.core).");

  nb::dict aliases;  // {older name: cuda.core 1.2 name}, for the Python EventOptions
  for (const EventOptionName& n : kEventOptionNames)
    if (n.alias) aliases[n.alias] = n.name;
  internal_module(m).attr("event_option_aliases") = aliases;
}

}  // namespace nanocuda::py
