// Device objects as cuda.core has them (one Python object per ordinal per thread), and the
// options objects (StreamOptions/EventOptions) read the same way by every binding.
#pragma once

#include <nanobind/nanobind.h>

#include <initializer_list>
#include <string>

#include "nanocuda/core/device.h"
#include "nanocuda/core/event.h"
#include "nanocuda/core/ipc_event.h"

namespace nanocuda::py {

// The ordinal `obj` names: a Device, an int (or anything with __index__), or None for the
// current context's device (0 when none is current). TypeError/ValueError name `call`.
int device_ordinal_arg(nanobind::handle obj, const char* call);
// The same with `if_none` for None; also reads torch's "cuda" / "cuda:N" strings (the one
// place device arguments are converted: every binding taking a device goes through here).
int device_ordinal_arg(nanobind::handle obj, const char* call, int if_none);

// The Device object of `ordinal` for this thread, made on first use: Device(0) is Device(0),
// and stream.device / buffer.device return that same object. Kept in the thread's state
// dict, so it goes away with the thread.
inline nanobind::object device_object(int ordinal) {
  static PyObject* key = PyUnicode_InternFromString("nanocuda.Device.per_thread");
  PyObject* tdict = PyThreadState_GetDict();  // borrowed; set whenever the GIL is held
  if (!tdict) throw nanobind::type_error("Device: no Python thread state");
  PyObject* cache = PyDict_GetItemWithError(tdict, key);
  if (!cache) {
    if (PyErr_Occurred()) throw nanobind::python_error();
    nanobind::dict fresh;
    if (PyDict_SetItem(tdict, key, fresh.ptr()) != 0) throw nanobind::python_error();
    cache = fresh.ptr();  // the thread dict holds it now
  }
  nanobind::int_ k(ordinal);
  if (PyObject* hit = PyDict_GetItemWithError(cache, k.ptr())) return nanobind::borrow(hit);
  if (PyErr_Occurred()) throw nanobind::python_error();
  nanobind::object made = nanobind::cast(Device(ordinal));
  if (PyDict_SetItem(cache, k.ptr(), made.ptr()) != 0) throw nanobind::python_error();
  return made;
}

// Reads option `name` from `options`: None (use the default), a dict (unknown keys are a
// ValueError listing the known ones) or any object with attributes (the options
// dataclasses, or cuda.core's own).
inline nanobind::object option(nanobind::handle options, const char* name) {
  if (options.is_none()) return nanobind::none();
  if (PyDict_Check(options.ptr())) {
    PyObject* v = PyDict_GetItemString(options.ptr(), name);
    return v ? nanobind::borrow(v) : nanobind::none();
  }
  return nanobind::getattr(options, name, nanobind::none());
}

inline void check_option_names(nanobind::handle options, const char* call,
                               std::initializer_list<const char*> names) {
  if (options.is_none()) return;
  if (!PyDict_Check(options.ptr())) {
    for (const char* n : names)
      if (nanobind::hasattr(options, n)) return;
    throw nanobind::type_error((std::string(call) + ": options must be None, a dict or an options "
                                "object with attributes like '" + *names.begin() + "', got " +
                                Py_TYPE(options.ptr())->tp_name).c_str());
  }
  for (auto [k, v] : nanobind::borrow<nanobind::dict>(options)) {
    std::string key = nanobind::str(k).c_str();
    bool known = false;
    std::string list;
    for (const char* n : names) {
      known |= key == n;
      list += (list.empty() ? "" : ", ") + std::string(n);
    }
    if (!known)
      throw nanobind::value_error((std::string(call) + ": unknown option '" + key +
                                   "' (known: " + list + ")").c_str());
  }
}

inline bool bool_option(nanobind::handle options, const char* name, bool fallback) {
  nanobind::object v = option(options, name);
  if (v.is_none()) return fallback;
  int truth = PyObject_IsTrue(v.ptr());
  if (truth < 0) throw nanobind::python_error();
  return truth != 0;
}

// EventOptions' names: cuda.core 1.2's, each beside the older name (cuda.core before 1.0 and
// nanocuda's first spelling). The one alias table: readers below accept either name, and the
// Python EventOptions builds its alias properties from it (_internal.event_option_aliases).
struct EventOptionName {
  const char* name;
  const char* alias;  // nullptr: no other name
};
inline constexpr EventOptionName kEventOptionNames[] = {
    {"timing_enabled", "enable_timing"}, {"blocking_sync", "busy_waited_sync"}, {"ipc_enabled", nullptr}};

// Option `n` read under either of its names; both given and disagreeing is a ValueError.
inline bool event_option(nanobind::handle options, const EventOptionName& n, const char* call) {
  nanobind::object v = option(options, n.name);
  nanobind::object old = n.alias ? option(options, n.alias) : nanobind::none();
  if (v.is_none()) v = old;
  else if (!old.is_none() && PyObject_IsTrue(v.ptr()) != PyObject_IsTrue(old.ptr()))
    throw nanobind::value_error((std::string(call) + ": options give " + n.name + " and its older name " +
                                 n.alias + " different values; give one").c_str());
  if (v.is_none()) return false;
  int truth = PyObject_IsTrue(v.ptr());
  if (truth < 0) throw nanobind::python_error();
  return truth != 0;
}

// An Event from cuda.core's EventOptions (timing_enabled, blocking_sync, ipc_enabled, or the
// older enable_timing, busy_waited_sync); ipc_enabled goes to the IPC event maker, so there is
// one way to make each kind. `default_timing` applies when options do not say. `bound`: the
// event is recorded at once (Stream.record); cuda.core makes IPC events only that way, so
// they are never re-recorded after another process opened them (cuda.core's words below).
inline Event event_from_options(const Device& device, nanobind::handle options, const char* call,
                                bool default_timing = false, bool bound = false,
                                const Context* context = nullptr) {
  const auto& [timing_name, blocking_name, ipc_name] = kEventOptionNames;
  check_option_names(options, call, {timing_name.name, blocking_name.name, ipc_name.name,
                                     timing_name.alias, blocking_name.alias});
  bool timing = default_timing;
  if (!option(options, timing_name.name).is_none() || !option(options, timing_name.alias).is_none())
    timing = event_option(options, timing_name, call);
  bool blocking = event_option(options, blocking_name, call);
  if (event_option(options, ipc_name, call)) {
    if (!bound) throw nanobind::type_error("IPC-enabled events must be bound; use Stream.record for creation.");
    if (timing) throw nanobind::type_error("IPC-enabled events cannot use timing.");
    return create_ipc_event(device, blocking);
  }
  // In `context` when given (Stream.record: the stream's, which may be a green context).
  return context ? Event(device, *context, timing, blocking) : Event(device, timing, blocking);
}

}  // namespace nanocuda::py
