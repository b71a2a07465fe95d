// Python bindings for ProgramOptions, Program, ObjectCode, LinkerOptions and Linker, taking cuda.core's names beside nanocuda's.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>

#include "compile/compile_bindings.h"
#include "nanocuda/compile/compile_cache.h"
#include "nanocuda/compile/library.h"
#include "nanocuda/compile/linker.h"
#include "nanocuda/compile/program.h"
#include "nanocuda/driver/error.h"

namespace nb = nanobind;

namespace nanocuda::py {

namespace {

// bytes-like -> the image; str / os.PathLike -> read that file (PTX text as str is PTX).
ObjectCode to_object_code(CodeType type, const nb::handle& data, const nb::handle& name_arg,
                          const nb::handle& symbol_mapping) {
  const std::string call = std::string("ObjectCode.from_") + code_type_name(type);
  const std::string name = name_arg.is_none() ? std::string() : text_arg(name_arg, call.c_str(), "name", "a str");
  ObjectCode code = [&] {
    if (nb::isinstance<nb::bytes>(data)) {
      nb::bytes b = nb::borrow<nb::bytes>(data);
      return ObjectCode::from_bytes(type, std::string(b.c_str(), b.size()), name);
    }
    if (type == CodeType::ptx && nb::isinstance<nb::str>(data)) {
      std::string text = nb::cast<std::string>(data);
      if (text.find(".version") != std::string::npos) return ObjectCode::from_bytes(type, std::move(text), name);
    }
    if (nb::isinstance<nb::str>(data) || nb::hasattr(data, "__fspath__")) {
      // cuda.core reads a str as a path; text that cannot be one (it spans lines) is not
      // opened as a file but named for what it is.
      std::string path = fspath(data);
      if (nb::isinstance<nb::str>(data) && path.find('\n') != std::string::npos)
        throw ValueError(std::string("ObjectCode.from_") + code_type_name(type) + ": module is a str of " +
                         std::to_string(path.size()) + " characters spanning lines, not a path to a file" +
                         (type == CodeType::ptx ? ", and not PTX (it has no '.version' directive)" : "") +
                         "; pass the image as bytes or a path to its file");
      return ObjectCode::from_file(type, path, name);
    }
    if (!nb::hasattr(data, "__buffer__") && !PyObject_CheckBuffer(data.ptr()))
      throw TypeError(std::string("ObjectCode.from_") + code_type_name(type) +
                      ": module must be bytes, a path (str or os.PathLike) or a buffer, got " +
                      nb::cast<std::string>(nb::str(data.type().attr("__name__"))));
    nb::bytes b(nb::module_::import_("builtins").attr("bytes")(data));  // bytearray, memoryview
    return ObjectCode::from_bytes(type, std::string(b.c_str(), b.size()), name);
  }();
  if (!symbol_mapping.is_none()) {
    std::map<std::string, std::string> names;
    if (!nb::isinstance<nb::dict>(symbol_mapping) ||
        !nb::try_cast<std::map<std::string, std::string>>(symbol_mapping, names))
      throw TypeError(call + ": symbol_mapping must be a dict of str to str ({name expression: lowered name}), got " +
                      nb::cast<std::string>(nb::repr(symbol_mapping)));
    code = code.with_lowered_names(std::move(names));
  }
  return code;
}

// ProgramOptions.__setattr__: what the class defines (fields, methods) is set as Python sets
// it; any other name is refused rather than stored where no compile would read it.
void set_program_options_attr(nb::handle self, nb::str name, nb::handle value) {
  if (!nb::hasattr(self.type(), name)) {
    std::string key = nb::cast<std::string>(name);
    bool cuda_core_name = false;
    for (const auto& n : ProgramOptions::option_names()) cuda_core_name = cuda_core_name || n == key;
    throw nb::attribute_error(("ProgramOptions has no attribute '" + key + "' to set" +
                               (cuda_core_name ? "; pass it when constructing: ProgramOptions(" + key + "=...)"
                                               : std::string())).c_str());
  }
  if (PyObject_GenericSetAttr(self.ptr(), name.ptr(), value.ptr()) != 0) throw nb::python_error();
}

std::string kernel_name(const nb::handle& name) {
  if (nb::isinstance<nb::bytes>(name)) return nb::borrow<nb::bytes>(name).c_str();
  if (!nb::isinstance<nb::str>(name))  // nb::cast would throw std::bad_cast
    throw nb::type_error((std::string("ObjectCode.get_kernel: name must be a str or bytes, got ") +
                          Py_TYPE(name.ptr())->tp_name).c_str());
  return nb::cast<std::string>(name);
}

// cuda.core's Linker: the C++ Linker plus the closed flag.
struct PyLinker {
  Linker linker;
  bool closed = false;
};

}  // namespace

void bind_program(nb::module_& m) {
  // dynamic_attr: an instance may shadow a method (cuda.core's dataclass lets monkeypatch
  // replace as_bytes); __setattr__ below keeps every other name from becoming a silent attribute.
  nb::class_<ProgramOptions>(m, "ProgramOptions", nb::dynamic_attr(),
                             "NVRTC options: nanocuda's keywords and every cuda.core ProgramOptions name.")
      .def("__init__",
           [](ProgramOptions* self, nb::kwargs kwargs) {
             new (self) ProgramOptions{};
             for (auto [key, value] : kwargs) {
               set_program_option(*self, nb::cast<std::string>(key), value);
               self->validate();  // now, so the error comes from the call that set it
             }
           },
           "Keywords: arch ('sm_90a', '90a'; default: the current device's), std, defines, include_dirs, fast_math, "
           "lineinfo, debug, max_registers, relocatable_device_code, default_device, extra_flags, and "
           "cuda.core's names (use_fast_math, max_register_count, define_macro, include_path, ftz, "
           "prec_div, diag_suppress, ...). An unknown name raises TypeError naming close matches.")
      .def_rw("arch", &ProgramOptions::arch, "Target: '90a', 'sm_90a' or 'compute_90'; empty means the current device's.")
      .def_rw("std", &ProgramOptions::std, "C++ standard passed as -std= (default 'c++17').")
      .def_rw("defines", &ProgramOptions::defines, "Macros as 'NAME' or 'NAME=VALUE' strings (-D).")
      .def_rw("include_dirs", &ProgramOptions::include_dirs, "Folders searched for #include, before the toolkit's (-I).")
      .def_rw("fast_math", &ProgramOptions::fast_math, "--use_fast_math.")
      .def_rw("lineinfo", &ProgramOptions::lineinfo, "-lineinfo: source lines for profilers.")
      .def_rw("debug", &ProgramOptions::debug, "-G: device debug information.")
      .def_rw("max_registers", &ProgramOptions::max_registers, "--maxrregcount; 0 leaves it to NVRTC.")
      .def_rw("relocatable_device_code", &ProgramOptions::relocatable_device_code, "-rdc=true, for linking with link().")
      .def_rw("default_device", &ProgramOptions::default_device, "-default-device: unannotated functions are device code (on by default).")
      .def_rw("extra_flags", &ProgramOptions::extra_flags, "Further NVRTC flags, passed as given.")
      .def("__getattr__", &program_option, nb::arg("name"), "A cuda.core option by name (None when unset).")
      .def("__setattr__", &set_program_options_attr, nb::arg("name"), nb::arg("value"),
           "Set a field (arch, std, ...) or shadow a method on this instance; cuda.core names are set at construction.")
      .def("named_flags", &ProgramOptions::named_flags, "The NVRTC flags of the cuda.core-named options.")
      .def("as_bytes",
           [](const ProgramOptions& o, const std::string& backend, nb::object target) {
             std::optional<CodeType> t;
             if (!target.is_none()) t = parse_code_type(nb::cast<std::string>(target));
             nb::list out;
             for (const auto& f : backend_flags(o, backend, t)) out.append(nb::bytes(f.data(), f.size()));
             return out;
           },
           nb::arg("backend") = "nvrtc", nb::arg("target_type") = nb::none(),
           "The flags, as bytes, this compiles with on `backend` ('nvrtc', 'nvjitlink', 'nvvm').")
      .def_static("option_names", &ProgramOptions::option_names, "Every cuda.core ProgramOptions name accepted.")
      .def("__repr__", [](const ProgramOptions& o) {
        return "<nanocuda.ProgramOptions arch='" + o.arch + "' std='" + o.std + "'>";
      });

  nb::class_<ObjectCode>(m, "ObjectCode", "Compiled device code: cubin, fatbin, PTX, LTO-IR, device objects or libraries.",
                         nb::is_weak_referenceable())
      .def("__init__",
           [](ObjectCode*, nb::args, nb::kwargs) {
             // cuda.core's error (RuntimeError) for the front door: the from_* constructors say what the bytes are.
             throw nb::builtin_exception(nb::exception_type::runtime_error,
                                         "ObjectCode objects cannot be instantiated directly. Use ObjectCode.from_cubin, "
                                         "from_ptx, from_ltoir, from_fatbin, from_object or from_library, or Program.compile.");
           },
           "Not constructible: use the from_* constructors or Program.compile.")
      .def_static("from_cubin", [](nb::object d, nb::object name, nb::object sm) { return to_object_code(CodeType::cubin, d, name, sm); },
                  nb::arg("module"), nb::kw_only(), nb::arg("name") = "", nb::arg("symbol_mapping") = nb::none(),
                  "From bytes, or a path to read.")
      .def_static("from_fatbin", [](nb::object d, nb::object name, nb::object sm) { return to_object_code(CodeType::fatbin, d, name, sm); },
                  nb::arg("module"), nb::kw_only(), nb::arg("name") = "", nb::arg("symbol_mapping") = nb::none(),
                  "From bytes, or a path to read.")
      .def_static("from_ptx", [](nb::object d, nb::object name, nb::object sm) { return to_object_code(CodeType::ptx, d, name, sm); },
                  nb::arg("module"), nb::kw_only(), nb::arg("name") = "", nb::arg("symbol_mapping") = nb::none(),
                  "From PTX text (str), bytes, or a path to read.")
      .def_static("from_ltoir", [](nb::object d, nb::object name, nb::object sm) { return to_object_code(CodeType::ltoir, d, name, sm); },
                  nb::arg("module"), nb::kw_only(), nb::arg("name") = "", nb::arg("symbol_mapping") = nb::none(),
                  "From bytes, or a path to read.")
      .def_static("from_object", [](nb::object d, nb::object name, nb::object sm) { return to_object_code(CodeType::object, d, name, sm); },
                  nb::arg("module"), nb::kw_only(), nb::arg("name") = "", nb::arg("symbol_mapping") = nb::none(),
                  "A relocatable device object (.o), for Linker; from bytes or a path.")
      .def_static("from_library", [](nb::object d, nb::object name, nb::object sm) { return to_object_code(CodeType::library, d, name, sm); },
                  nb::arg("module"), nb::kw_only(), nb::arg("name") = "", nb::arg("symbol_mapping") = nb::none(),
                  "A device library (.a), for Linker; from bytes or a path.")
      .def_prop_ro("code",
                   [](const ObjectCode& o) -> nb::object {
                     // cuda.core's rule: code made from a file is that path (the bytes were read
                     // when it was made: bytes(ObjectCode) has them); else the image's bytes.
                     if (!o.path().empty()) return nb::str(o.path().c_str());
                     return nb::bytes(o.bytes().data(), o.bytes().size());
                   },
                   "The image's bytes (PTX as text bytes); for code made from a file, its path (a str).")
      .def("__bytes__", [](const ObjectCode& o) { return nb::bytes(o.bytes().data(), o.bytes().size()); },
           "The image's bytes, wherever they came from.")
      .def_prop_ro("code_type", [](const ObjectCode& o) { return std::string(code_type_name(o.type())); },
                   "'cubin', 'fatbin', 'ptx', 'ltoir', 'object' or 'library'.")
      .def_prop_ro("name", &ObjectCode::name, "The name it was compiled or loaded under.")
      .def_prop_ro("lowered_names", &ObjectCode::lowered_names, "{name expression: lowered name}.")
      .def_prop_ro("symbol_mapping", &ObjectCode::lowered_names,
                   "{name expression: lowered name} (cuda.core's name for lowered_names).")
      .def_prop_ro("kernel_names", &ObjectCode::kernel_names,
                   "Every kernel in the code (a cubin is read without a driver; other types are loaded).")
      .def_prop_ro("handle", [](const ObjectCode& o) { return reinterpret_cast<uint64_t>(o.library()->handle()); },
                   "The CUlibrary handle as an int (loads the code).")
      .def("get_kernel", [](const ObjectCode& o, nb::handle name) { return o.get_kernel(kernel_name(name)); },
           nb::arg("name"), "By name expression, extern \"C\" name or mangled name (str or bytes).")
      .def("__len__", [](const ObjectCode& o) { return o.bytes().size(); });

  nb::class_<Program>(m, "Program", "C++ (NVRTC, cached), PTX (nvJitLink) or NVVM IR (libNVVM) to compile.",
                      nb::is_weak_referenceable())
      .def("__init__",
           [](Program* self, nb::object code, nb::object code_type, nb::object options, nb::object name) {
             // nanocuda's Program(source, options) and cuda.core's Program(code, code_type, options).
             // Program(source, ProgramOptions) is nanocuda's short form; anything else in the
             // second place is cuda.core's code_type, and the error says so.
             if (!code_type.is_none() && !nb::isinstance<nb::str>(code_type)) {
               if (!options.is_none() || !nb::isinstance<ProgramOptions>(code_type))
                 throw TypeError("Program: code_type (the second argument) must be 'c++', 'ptx' or 'nvvm' "
                                 "(or a nanocuda.ProgramOptions, as Program(code, options)), got " +
                                 std::string(Py_TYPE(code_type.ptr())->tp_name) + " " +
                                 nb::cast<std::string>(nb::repr(code_type)));
               options = code_type;
               code_type = nb::none();
             }
             SourceType type = code_type.is_none() ? SourceType::cxx : parse_source_type(nb::cast<std::string>(code_type));
             std::string text;
             if (nb::isinstance<nb::str>(code)) text = nb::cast<std::string>(code);
             else if (type == SourceType::nvvm && PyObject_CheckBuffer(code.ptr())) {
               nb::bytes b(nb::module_::import_("builtins").attr("bytes")(code));
               text.assign(b.c_str(), b.size());
             } else {
               throw TypeError(std::string("Program: code must be a str") +
                               (type == SourceType::nvvm ? ", bytes or bytearray" : "") + " for code_type '" +
                               source_type_name(type) + "', got " +
                               nb::cast<std::string>(nb::str(code.type().attr("__name__"))));
             }
             new (self) Program(std::move(text), type, program_options_from(options),
                                name.is_none() ? std::string() : text_arg(name, "Program", "name", "a str"));
           },
           nb::arg("code"), nb::arg("code_type") = nb::none(), nb::arg("options") = nb::none(), nb::kw_only(),
           nb::arg("name") = nb::none(),
           "Program(code, code_type='c++'|'ptx'|'nvvm', options=ProgramOptions(...)); nanocuda's "
           "Program(source, options) works too.")
      .def_static("from_file",
                  [](nb::object path, nb::object options) {
                    if (!nb::isinstance<nb::str>(path) && !nb::hasattr(path, "__fspath__"))
                      throw TypeError(std::string("Program.from_file: path must be a str or os.PathLike, got ") +
                                      Py_TYPE(path.ptr())->tp_name);
                    return Program::from_file(fspath(path), program_options_from(options));
                  },
                  nb::arg("path"), nb::arg("options") = nb::none(),
                  "A Program of a .cu file: its folder is on the include path.")
      .def_prop_ro("source", &Program::source, "The source text (or NVVM bitcode).")
      .def_prop_ro("name", &Program::name, "The file name the compiler reports in messages.")
      .def_prop_ro("options", &Program::options, "The ProgramOptions it compiles with.")
      .def_prop_ro("code_type", [](const Program& p) { return std::string(source_type_name(p.source_type())); },
                   "'c++', 'ptx' or 'nvvm'.")
      .def_prop_ro("backend", [](const Program& p) { return std::string(p.backend()); },
                   "'NVRTC', 'nvJitLink' or 'NVVM'.")
      .def("compile",
           [](const Program& p, nb::object target_arg, nb::object exprs, nb::object logs, nb::object cache) {
             const std::string target = text_arg(target_arg, "Program.compile", "target_type", "'cubin', 'ptx' or 'ltoir'");
             if (!cache.is_none())  // the cache protocol is Python's (nanocuda/_program_cache.py)
               return nb::cast<ObjectCode>(nb::module_::import_("nanocuda._program_cache")
                   .attr("compile_with_cache")(nb::cast(p, nb::rv_policy::reference), target_arg, exprs, logs, cache));
             if (!logs.is_none() && !nb::hasattr(logs, "write"))
               throw TypeError("Program.compile: logs must be a file-like object with write() "
                               "(io.StringIO, sys.stderr, ...), got " + std::string(Py_TYPE(logs.ptr())->tp_name));
             std::vector<std::string> names = name_expressions_of(exprs, "Program.compile");
             auto warn_cache = [] {  // an untrusted cache folder is said once, as a warning
               for (const std::string& w : CompileCache::take_warnings())
                 if (PyErr_WarnEx(PyExc_RuntimeWarning, w.c_str(), 1) != 0) throw nb::python_error();
             };
             ObjectCode out = [&] {
               try {
                 nb::gil_scoped_release release;
                 return p.compile(parse_code_type(target), names);
               } catch (const std::exception&) {  // a failed compile still says why no cache
                 warn_cache();
                 throw;
               }
             }();
             warn_cache();
             if (!logs.is_none() && !out.log().empty()) logs.attr("write")(out.log());
             return out;
           },
           nb::arg("target_type") = "cubin", nb::arg("name_expressions") = nb::none(), nb::arg("logs") = nb::none(),
           nb::kw_only(), nb::arg("cache") = nb::none(),
           "Compile to 'cubin', 'ptx' or 'ltoir'; name_expressions ('f<int>') map to lowered names "
           "(ObjectCode.symbol_mapping); the compiler's log is written to logs (anything with write()) "
           "when it is not empty. cache= (a nanocuda.utils.ProgramCacheResource) is looked up first "
           "and filled on a miss. Raises CompileError with the log on failure.")
      .def("flags", [](const Program& p, nb::object target) {
             return p.flags(parse_code_type(text_arg(target, "Program.flags", "target", "'cubin', 'ptx' or 'ltoir'")));
           },
           nb::arg("target") = "cubin", "The compiler flags compile(target) uses.")
      .def("cache_key", [](const Program& p, nb::object target_arg, nb::object exprs) {
             const std::string target = text_arg(target_arg, "Program.cache_key", "target_type", "'cubin', 'ptx' or 'ltoir'");
             std::vector<std::string> names = name_expressions_of(exprs, "Program.cache_key");
             std::string key = p.cache_key(parse_code_type(target), names);
             return nb::bytes(key.data(), key.size());
           }, nb::arg("target_type") = "cubin", nb::arg("name_expressions") = nb::none(),
           "The compile cache's key for compile(target_type, name_expressions) (C++ sources only).")
      .def("close", [](const Program&) {}, "Nothing to release: nanocuda keeps no compiler state between compiles.")
      .def_prop_ro("is_closed", [](const Program&) { return false; }, "Always False (close() has nothing to free).");

  nb::class_<LinkerOptions>(m, "LinkerOptions", "nvJitLink options, by cuda.core's LinkerOptions names.")
      .def("__init__",
           [](LinkerOptions* self, nb::kwargs kwargs) {
             new (self) LinkerOptions{};
             for (auto [key, value] : kwargs) {
               if (value.is_none()) continue;
               std::string k = nb::cast<std::string>(key);  // the core's set() knows every name
               self->set(k, k == "extra_flags" ? OptionValue(words(value)) : to_option_value("LinkerOptions", k, value));
             }
           },
           "Keywords: name, arch, link_time_optimization (or lto), debug, lineinfo, max_register_count, "
           "ftz, prec_div, prec_sqrt, fma, optimization_level, ptxas_options, ... (cuda.core's names).")
      .def_rw("arch", &LinkerOptions::arch, "Target ('sm_90a', '90a'); empty means the current device's.")
      .def_rw("name", &LinkerOptions::name, "The linked ObjectCode's name.")
      .def_rw("debug", &LinkerOptions::debug, "-g.")
      .def_rw("lineinfo", &LinkerOptions::lineinfo, "-lineinfo.")
      .def_rw("link_time_optimization", &LinkerOptions::lto, "-lto (on by itself when an input is LTO-IR).")
      .def_rw("extra_flags", &LinkerOptions::extra_flags, "Further nvJitLink flags, passed as given.")
      .def("flags", [](const LinkerOptions& o, const std::string& target) { return o.flags(parse_code_type(target)); },
           nb::arg("target") = "cubin", "The nvJitLink flags a link to target uses (resolves the arch).")
      .def("as_bytes",
           [](const LinkerOptions& o, const std::string& backend) {
             if (backend != "nvjitlink" && backend != "nvJitLink")
               throw ValueError("LinkerOptions.as_bytes: backend '" + backend +
                                "' is not used: nanocuda's LinkerOptions only supports 'nvjitlink' backend");
             nb::list out;
             for (const auto& f : o.flags(CodeType::cubin)) out.append(nb::bytes(f.data(), f.size()));
             return out;
           },
           nb::arg("backend") = "nvjitlink", "The nvJitLink flags, as bytes, a link to cubin uses.")
      .def_static("option_names", &LinkerOptions::option_names, "Every cuda.core LinkerOptions name accepted.");

  nb::class_<PyLinker>(m, "Linker", "Links ObjectCodes into one cubin or PTX with nvJitLink.",
                       nb::is_weak_referenceable())
      .def("__init__",
           [](PyLinker* self, nb::args objects, nb::object options) {
             if (objects.size() == 0)
               throw ValueError("Linker: At least one ObjectCode object must be provided (Linker(*object_codes))");
             LinkerOptions opts;
             if (!options.is_none()) {
               if (!nb::isinstance<LinkerOptions>(options))
                 throw TypeError("Linker: options must be a nanocuda.LinkerOptions");
               opts = nb::cast<LinkerOptions>(options);
             }
             Linker linker(std::move(opts));
             for (nb::handle o : objects) {
               if (!nb::isinstance<ObjectCode>(o))
                 throw TypeError("Linker: inputs must be nanocuda.ObjectCode, got " +
                                 nb::cast<std::string>(nb::str(o.type().attr("__name__"))));
               linker.add(nb::cast<ObjectCode>(o));
             }
             // The nvJitLink session now, as cuda.core's Linker: a bad arch or option raises here.
             (void)linker.handle();
             new (self) PyLinker{std::move(linker)};
           },
           nb::arg("object_codes"), nb::arg("options") = nb::none(),
           "Linker(*object_codes, options=LinkerOptions(...)).")
      .def("link",
           [](PyLinker& l, const std::string& target) {
             if (l.closed) throw ValueError("Linker.link: the linker is closed");
             CodeType t = parse_code_type(target);
             nb::gil_scoped_release release;
             return l.linker.link(t);
           },
           nb::arg("target_type") = "cubin", "Link to 'cubin' or 'ptx'; raises CompileError with nvJitLink's log.")
      .def("get_error_log", [](const PyLinker& l) { return l.linker.error_log(); }, "nvJitLink's error log of the last link().")
      .def("get_info_log", [](const PyLinker& l) { return l.linker.info_log(); }, "nvJitLink's info log of the last link().")
      .def("close", [](PyLinker& l) { l.linker.close(); l.closed = true; },
           "Destroys the open nvJitLink session and marks the linker closed (the logs stay readable).")
      .def_prop_ro("is_closed", [](const PyLinker& l) { return l.closed; }, "Whether close() was called.")
      .def_prop_ro("handle",
                   [](PyLinker& l) -> std::uintptr_t {
                     if (l.closed) return 0;
                     return reinterpret_cast<std::uintptr_t>(l.linker.handle());
                   },
                   "The nvJitLinkHandle (an int) the next link() completes; 0 once closed.")
      .def_static("backend", [] { return std::string("nvJitLink"); }, "Always 'nvJitLink'.");
  // cuda.core's which_backend is a classmethod (inspect.getattr_static shows it).
  nb::object linker_type = m.attr("Linker");
  nb::setattr(linker_type, "which_backend",
              nb::module_::import_("builtins").attr("classmethod")(nb::cpp_function(
                  [](nb::handle) { return std::string("nvJitLink"); }, nb::arg("cls"), nb::name("which_backend"),
                  "The link backend: always 'nvJitLink' (nanocuda links with nvJitLink only).")));
}

}  // namespace nanocuda::py
