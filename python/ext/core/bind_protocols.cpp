// The object protocols of the public types, in one place: == and hash by handle, repr in
// cuda.core's format, pickling where cuda.core pickles, and Kernel.from_handle.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cinttypes>
#include <cstdio>
#include <string>
#include <utility>

#include "bindings.h"
#include "core/py_buffer.h"
#include "core/py_device.h"
#include "core/py_size.h"
#include "core/py_stream.h"
#include "nanocuda/compile/kernel.h"
#include "nanocuda/compile/library.h"
#include "nanocuda/compile/object_code.h"
#include "nanocuda/compile/program.h"
#include "nanocuda/core/event.h"
#include "nanocuda/core/green_context.h"
#include "nanocuda/core/stream.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

std::string hex(const void* p) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%" PRIxPTR, reinterpret_cast<std::uintptr_t>(p));
  return text;
}
std::string hex(std::uint64_t v) { return hex(reinterpret_cast<const void*>(static_cast<std::uintptr_t>(v))); }

// A Buffer's address, 0 once closed (Buffer::ptr() refuses a closed one).
std::uint64_t address_of(const Buffer& b) { return b.is_closed() ? 0 : static_cast<std::uint64_t>(b.ptr()); }

// Sets `name` on T's Python class, after the class is bound, so each rule lives here once.
// No nb::scope: a scoped function would become an overload of an attribute of the same name.
template <class T, class F>
void set_method(const char* name, F&& f, const char* doc = nullptr) {
  nb::object fn = doc ? nb::cpp_function(std::forward<F>(f), nb::name(name), nb::is_method(), doc)
                      : nb::cpp_function(std::forward<F>(f), nb::name(name), nb::is_method());
  nb::setattr(nb::type<T>(), name, fn);
}

// Objects that live in one process (a stream, a context, a loaded kernel) refuse pickling by
// name and say what crosses instead.
template <class T>
void refuse_pickle(const char* what, const char* instead) {
  std::string message = std::string("cannot pickle a nanocuda.") +
                        nb::cast<std::string>(nb::type<T>().attr("__name__")) + ": " +
                        what + " belongs to the process that made it; " + instead;
  set_method<T>("__reduce__", [message](nb::handle) -> nb::object { throw nb::type_error(message.c_str()); });
}

// The Python function that rebuilds an ObjectCode (nanocuda._pickle.object_code), imported on
// first pickling only.
nb::object object_code_rebuilder() {
  return nb::module_::import_("nanocuda._pickle").attr("object_code");
}

// A `cls` instance (Stream or a Python subclass of it) holding `s`: what cuda.core's
// Stream._init / _legacy_default / _per_thread_default return for a subclass.
void check_stream_class(nb::handle cls, const char* call) {
  nb::handle base = nb::type<PyStream>();
  if (!PyType_Check(cls.ptr()) ||
      !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()), reinterpret_cast<PyTypeObject*>(base.ptr())))
    throw nb::type_error((std::string(call) + ": cls must be nanocuda.Stream or a subclass of it").c_str());
}
nb::object stream_of_class(nb::handle cls, const PyStream& s, const char* call) {
  check_stream_class(cls, call);
  nb::object obj = nb::inst_alloc(cls);
  new (nb::inst_ptr<PyStream>(obj)) PyStream(s);
  nb::inst_mark_ready(obj);
  return obj;
}

// Sets a classmethod `name` on Stream.
template <class F, class... Extra>
void set_stream_classmethod(const char* name, F&& f, const Extra&... extra) {
  nb::object fn = nb::cpp_function(std::forward<F>(f), nb::name(name), extra...);
  nb::setattr(nb::type<PyStream>(), name, nb::steal(PyClassMethod_New(fn.ptr())));
}

}  // namespace

void bind_protocols(nb::module_& m) {
  (void)m;
  // --- Device: one per ordinal; pickles as its ordinal (Device(n) is the same object again) --
  set_method<Device>("__repr__", [](const Device& d) {
    std::string name;
    try {
      name = d.name();
    } catch (const std::exception&) {  // no driver: repr still works
      name = "name unavailable";
    }
    return "<Device " + std::to_string(d.ordinal()) + " (" + name + ")>";
  });
  set_method<Device>("__reduce__", [](const Device& d) {
    return nb::make_tuple(nb::type<Device>(), nb::make_tuple(d.ordinal()));
  }, "Pickles as the ordinal: unpickling gives Device(ordinal) of the receiving process.");

  set_method<Context>("__repr__", [](const Context& c) {
    return "<Context handle=" + hex(c.handle()) + " device=" + std::to_string(c.device_ordinal()) + ">";
  });
  refuse_pickle<Context>("a CUDA context", "pickle its Device instead");
  refuse_pickle<SmResource>("an SM partition", "pickle its Device and split Device.resources.sm there");

  // --- Stream and Event: by handle ---------------------------------------------------------
  set_method<PyStream>("__repr__", [](const PyStream& s) {
    return "<Stream handle=" + hex(s.unchecked().raw_handle()) + " context=" + hex(s.unchecked().context().handle()) +
           (s.is_closed() ? " (closed)>" : ">");
  });
  refuse_pickle<PyStream>("a CUDA stream", "pickle its Device and make a stream there");
  // cuda.core's factories for Stream subclasses (class MyStream(Stream)): an instance of cls.
  set_stream_classmethod("_init", [](nb::handle cls, nb::handle obj, nb::handle options, nb::handle device_id) {
    check_stream_class(cls, "Stream._init");
    nb::object made = device_object(device_ordinal_arg(device_id, "Stream._init")).attr("create_stream")(obj, options);
    return stream_of_class(cls, *nb::inst_ptr<PyStream>(made), "Stream._init");
  }, nb::arg("cls"), nb::arg("obj").none() = nb::none(), nb::arg("options").none() = nb::none(),
     nb::arg("device_id").none() = nb::none(),
     "A new stream (Device.create_stream(obj, options) on device_id) as an instance of cls.");
  set_stream_classmethod("_legacy_default", [](nb::handle cls) {
    return stream_of_class(cls, PyStream(StreamRef::legacy(Device(device_ordinal_arg(nb::none(), "Stream._legacy_default")))),
                           "Stream._legacy_default");
  }, "The current device's legacy default stream as an instance of cls.");
  set_stream_classmethod("_per_thread_default", [](nb::handle cls) {
    return stream_of_class(cls, PyStream(StreamRef::per_thread(Device(device_ordinal_arg(nb::none(), "Stream._per_thread_default")))),
                           "Stream._per_thread_default");
  }, "The current device's per-thread default stream as an instance of cls.");
  set_method<Event>("__repr__", [](const Event& e) {
    return "<Event handle=" + hex(e.handle()) + (e.is_closed() ? " (closed)>" : ">");
  });
  // end - start is the only arithmetic: cuda.core returns NotImplemented for the others.
  set_method<Event>("__rsub__", [](nb::handle, nb::handle) { return nb::handle(Py_NotImplemented); });
  set_method<Event>("__isub__", [](nb::handle, nb::handle) { return nb::handle(Py_NotImplemented); });

  // --- Buffer: by address and size (two Buffers over the same memory are equal) ------------
  set_method<PyBuffer>("__eq__", [](nb::handle self, nb::handle other) -> nb::object {
    if (!nb::isinstance<PyBuffer>(other)) return nb::borrow(Py_NotImplemented);
    if (self.is(other)) return nb::bool_(true);
    const Buffer& a = nb::inst_ptr<PyBuffer>(self)->buffer;
    const Buffer& b = nb::inst_ptr<PyBuffer>(other)->buffer;
    return nb::bool_(!a.is_closed() && !b.is_closed() && a.ptr() == b.ptr() && a.size() == b.size());
  });
  set_method<PyBuffer>("__hash__", [](const PyBuffer& b) {
    return nb::hash(nb::make_tuple(address_of(b.buffer), b.buffer.size()));
  });
  set_method<PyBuffer>("__repr__", [](const PyBuffer& b) {
    return "<Buffer ptr=" + hex(address_of(b.buffer)) + " size=" +
           std::to_string(b.buffer.size()) + (b.buffer.is_closed() ? " (closed)>" : ">");
  });

  // --- Kernel: by CUkernel handle; from_handle adopts one ----------------------------------
  set_method<Kernel>("__eq__", [](const Kernel& a, nb::handle other) -> nb::object {
    if (!nb::isinstance<Kernel>(other)) return nb::borrow(Py_NotImplemented);
    return nb::bool_(a.handle() == nb::inst_ptr<Kernel>(other)->handle());
  });
  set_method<Kernel>("__hash__", [](const Kernel& k) {
    return nb::hash(nb::int_(reinterpret_cast<std::uintptr_t>(k.handle())));
  });
  set_method<Kernel>("__repr__", [](const Kernel& k) { return "<Kernel handle=" + hex(k.handle()) + ">"; });
  refuse_pickle<Kernel>("a loaded kernel", "pickle its ObjectCode and call get_kernel() after unpickling");
  nb::setattr(nb::type<Kernel>(), "from_handle", nb::cpp_function(  // a plain function: static
      [](nb::handle handle, nb::handle mod) {
        auto h = reinterpret_cast<CUkernel>(handle_arg(handle, "Kernel.from_handle", "handle"));
        std::shared_ptr<const Library> library;
        if (!mod.is_none()) {
          if (!nb::isinstance<ObjectCode>(mod))
            throw nb::type_error(("Kernel.from_handle: mod must be a nanocuda.ObjectCode or None, got " +
                                  std::string(Py_TYPE(mod.ptr())->tp_name)).c_str());
          library = nb::inst_ptr<ObjectCode>(mod)->library();
        }
        CUlibrary given = library ? library->handle() : nullptr;
        Kernel k = Kernel::from_handle(h, std::move(library));
        CUlibrary owner = given ? k.driver_library() : nullptr;
        if (owner && owner != given) {
          std::string text = "Kernel.from_handle: the kernel's library (" + hex(owner) + ") does not match mod's (" +
                              hex(given) + "); mod is kept loaded with the Kernel but does not own it";
          if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) != 0) throw nb::python_error();
        }
        return k;
      },
      nb::name("from_handle"), nb::arg("handle").none(), nb::arg("mod") = nb::none(),
      "A Kernel over a CUkernel handle made elsewhere (an int, or cuda.bindings' CUkernel); `mod`, an "
      "ObjectCode, is kept loaded with it."));

  // --- ObjectCode and Program ---------------------------------------------------------------
  set_method<ObjectCode>("__repr__", [](const ObjectCode& o) {
    return "<ObjectCode handle=" + hex(o.loaded_handle()) + " code_type='" + code_type_name(o.type()) + "'>";
  });
  set_method<ObjectCode>("__reduce__", [](const ObjectCode& o) {
    nb::dict mapping;
    for (const auto& [expr, lowered] : o.lowered_names()) mapping[nb::str(expr.c_str())] = nb::str(lowered.c_str());
    return nb::make_tuple(object_code_rebuilder(),
                          nb::make_tuple(code_type_name(o.type()), nb::bytes(o.bytes().data(), o.bytes().size()),
                                         o.name(), mapping));
  }, "Pickles as its bytes, code type, name and symbol mapping (loaded again on first use).");
  set_method<Program>("__repr__", [](const Program& p) { return "<Program backend='" + std::string(p.backend()) + "'>"; });
  refuse_pickle<Program>("a Program", "pickle its source and options, or the compiled ObjectCode");
}

}  // namespace nanocuda::py
