// Green contexts in cuda.core's names: Device.resources, SMResource.split, Device.create_context, Context/Stream.resources.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../bindings.h"
#include "nanocuda/core/green_context.h"
#include "nanocuda/core/stream.h"
#include "py_device.h"
#include "py_stream.h"
#include "py_size.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

// What Device/Context/Stream.resources return: the SMs of a device or of one context.
struct DeviceResources {
  int ordinal = 0;
  std::optional<Context> context;  // unset: the whole device
};

[[noreturn]] void not_constructible(const char* name, const char* from) {
  throw std::runtime_error(std::string(name) + " cannot be instantiated directly; get one from " + from);
}

// The option shapes (scalar or sequence per field) are checked in Python, beside the
// SMResourceOptions dataclass: nanocuda._green_context.split_request -> (groups, min_count, flags).
nb::tuple split_request(nb::handle options) {
  return nb::cast<nb::tuple>(nb::module_::import_("nanocuda._green_context").attr("split_request")(options));
}

Context create_context(const Device& d, nb::handle options) {
  const char* call = "Device.create_context";
  if (options.is_none()) throw nb::value_error("Device.create_context: resources must be provided");
  nb::object resources = nb::module_::import_("nanocuda._green_context").attr("context_resources")(options);
  if (resources.is_none()) throw nb::value_error("Device.create_context: resources must be provided");
  std::vector<SmResource> sms;
  for (nb::handle r : resources) {
    if (!nb::isinstance<SmResource>(r))
      throw nb::type_error((std::string(call) + ": resources must hold SMResource objects (from "
                            "Device.resources.sm or SMResource.split), got " + Py_TYPE(r.ptr())->tp_name).c_str());
    sms.push_back(nb::cast<const SmResource&>(r));
  }
  return create_green_context(d, sms);
}

PyStream context_create_stream(const Context& c, nb::handle options) {
  check_option_names(options, "Context.create_stream", {"nonblocking", "priority"});
  if (!c.is_green()) return PyStream(Stream::create_green(c));  // raises: only green contexts
  bool non_blocking = bool_option(options, "nonblocking", true);
  nb::object priority = option(options, "priority");
  int prio = priority.is_none() || !non_blocking ? 0 : nb::cast<int>(priority);  // a blocking one fails first
  return PyStream(Stream::create_green(c, prio, non_blocking));  // the core refuses a blocking one
}

// Per thread, the Context objects set_current(ctx) pushed, by handle (weakly), so the one a
// later set_current pops comes back as the same object (cuda.core's identity round-trip).
nb::handle g_pushed_contexts;  // a threading.local, owned by nanocuda._nanocuda._internal

nb::object device_set_current(const Device& d, nb::handle ctx) {
  if (ctx.is_none()) {
    d.set_current();
    return nb::none();
  }
  if (!nb::isinstance<Context>(ctx))
    throw nb::type_error((std::string("Device.set_current: ctx must be a nanocuda.Context (or None for the "
                                      "primary context), got ") + Py_TYPE(ctx.ptr())->tp_name).c_str());
  const Context& c = nb::cast<const Context&>(ctx);
  std::optional<Context> popped = d.push_context(c);
  nb::object local = nb::borrow(g_pushed_contexts);
  if (!nb::hasattr(local, "by_handle")) nb::setattr(local, "by_handle", nb::dict());
  nb::dict by_handle = nb::cast<nb::dict>(local.attr("by_handle"));
  by_handle[nb::int_(reinterpret_cast<std::uintptr_t>(c.handle()))] = nb::module_::import_("weakref").attr("ref")(ctx);
  if (!popped) return nb::none();
  nb::int_ key(reinterpret_cast<std::uintptr_t>(popped->handle()));
  if (by_handle.contains(key)) {
    nb::object same = by_handle[key]();
    if (!same.is_none()) return same;
  }
  return nb::cast(*popped);
}

}  // namespace

void bind_green_context(nb::module_& m) {
  nb::class_<SmResource>(m, "SMResource",
                         "A set of SMs: a device's (Device.resources.sm), a green context's, or a group "
                         "of SMResource.split. Not constructible directly.")
      .def("__init__", [](SmResource*, nb::args, nb::kwargs) {
             not_constructible("SMResource", "Device.resources.sm or SMResource.split");
           })
      .def_prop_ro("handle", [](const SmResource& r) { return reinterpret_cast<std::uintptr_t>(&r.raw); },
                   "The address of the underlying CUdevResource struct.")
      .def_prop_ro("sm_count", &SmResource::sm_count, "The number of SMs in this resource.")
      .def_prop_ro("min_partition_size", &SmResource::min_partition_size,
                   "The fewest SMs a group of a split gets.")
      .def_prop_ro("coscheduled_alignment", &SmResource::coscheduled_alignment,
                   "Group sizes are multiples of this many SMs (guaranteed co-scheduled).")
      .def_prop_ro("flags", [](const SmResource&) { return 0u; },
                   "The resource's flags (always 0 with the CUDA 13.0 resource ABI).")
      .def("split", [](const SmResource& r, nb::handle options, nb::handle dry_run) {
             nb::tuple req = split_request(options);
             long long groups = nb::cast<long long>(req[0]);
             long long min_count = nb::cast<long long>(req[1]);
             unsigned flags = nb::cast<unsigned>(req[2]);
             if (min_count > r.sm_count())
               throw nb::value_error(("SMResource.split: count " + std::to_string(min_count) +
                                      " is larger than the resource's " + std::to_string(r.sm_count()) +
                                      " SMs").c_str());
             SmSplit s = split_sm_resource(r, static_cast<unsigned>(groups), static_cast<unsigned>(min_count),
                                           flags, bool_arg(dry_run, "SMResource.split", "dry_run"));
             return std::make_pair(s.groups, s.remainder);
           }, nb::arg("options"), nb::kw_only(), nb::arg("dry_run") = false,
           "Split into (groups, remainder) by SMResourceOptions (or a dict of its fields): count SMs "
           "per group (None: the smallest group), backfill to ignore co-scheduling. dry_run=True "
           "reports the sizes only; a dry-run group cannot make a context.");

  nb::class_<DeviceResources>(m, "DeviceResources",
                              "The hardware resources of a device (Device.resources) or of a context "
                              "(Context.resources, Stream.resources). Not constructible directly.")
      .def("__init__", [](DeviceResources*, nb::args, nb::kwargs) {
             not_constructible("DeviceResources", "Device.resources, Context.resources or Stream.resources");
           })
      .def_prop_ro("sm", [](const DeviceResources& r) {
             return r.context ? context_sm_resource(*r.context) : device_sm_resource(Device(r.ordinal));
           }, "The SMResource: all SMs of the device, or the partition of a green context.")
      .def_prop_ro("workqueue", [](const DeviceResources&) -> nb::object {
             throw std::runtime_error("DeviceResources.workqueue: work-queue resources need CUDA 13.1's "
                                      "driver API; this nanocuda is built against CUDA 13.0's");
           }, "Work-queue resources (CUDA 13.1+; not available in this build: RuntimeError).");

  auto ctx_resources = [](const Context& c) {
    if (c.is_closed()) throw std::runtime_error("Context.resources: the context is closed");
    return DeviceResources{c.device_ordinal(), c};
  };
  nb::object property = nb::module_::import_("builtins").attr("property");
  nb::setattr(nb::type<Device>(), "resources",
              property(nb::cpp_function([](const Device& d) { return DeviceResources{d.ordinal(), std::nullopt}; },
                                        nb::is_method()),
                       nb::none(), nb::none(), "The device's hardware resources (SMs)."));
  // cuda.core's private spelling of Device.context, which its green-context tests read.
  nb::setattr(nb::type<Device>(), "_context",
              property(nb::cpp_function([](const Device& d) { return *d.context(); }, nb::is_method()), nb::none(),
                       nb::none(), "cuda.core's private name for Device.context."));
  internal_module(m).attr("pushed_contexts") = nb::module_::import_("threading").attr("local")();
  g_pushed_contexts = internal_module(m).attr("pushed_contexts");
  nb::setattr(nb::type<Device>(), "set_current",
              nb::cpp_function(&device_set_current, nb::is_method(), nb::name("set_current"),
                               nb::arg("ctx") = nb::none(),
                               nb::sig("def set_current(self, ctx: Context | None = None) -> Context | None"),
                               "Make this device's primary context current on this thread (returns None); "
                               "with `ctx` (a Context of this device), pop the current context, push ctx "
                               "and return the popped one (None if there was none)."));
  nb::setattr(nb::type<Device>(), "create_context",
              nb::cpp_function(&create_context, nb::is_method(), nb::name("create_context"),
                               nb::arg("options") = nb::none(),
                               "A green context running on the SM groups in ContextOptions(resources=[...]) "
                               "(or a dict with 'resources')."));
  nb::setattr(nb::type<Context>(), "resources",
              property(
                  nb::cpp_function(ctx_resources, nb::is_method()), nb::none(), nb::none(),
                  "The context's resources: its SM partition for a green context, the device's otherwise."));
  nb::setattr(nb::type<Context>(), "is_green",
              property(
                  nb::cpp_function([](const Context& c) { return c.is_green(); }, nb::is_method()), nb::none(),
                  nb::none(), "True for a green context (Device.create_context)."));
  nb::setattr(nb::type<Context>(), "is_closed",
              property(
                  nb::cpp_function([](const Context& c) { return c.is_closed(); }, nb::is_method()), nb::none(),
                  nb::none(), "True once close() closed a green context."));
  nb::setattr(nb::type<Context>(), "close",
              nb::cpp_function([](Context& c) { c.close(); }, nb::is_method(), nb::name("close"),
                               "Close a green context (destroyed once its streams are gone; not while set_current made it current); "
                               "a no-op on a primary context."));
  nb::setattr(nb::type<Context>(), "create_stream",
              nb::cpp_function(&context_create_stream, nb::is_method(), nb::name("create_stream"),
                               nb::arg("options") = nb::none(),
                               "A new non-blocking stream on this green context (StreamOptions or a dict)."));
  nb::setattr(nb::type<PyStream>(), "resources",
              property(
                  nb::cpp_function([ctx_resources](const PyStream& s) { return ctx_resources(s.unchecked().context()); },
                                   nb::is_method()),
                  nb::none(), nb::none(), "The resources of the stream's context."));
}

}  // namespace nanocuda::py
