// Python values to compile options: ProgramOptions keywords, name_expressions, option values (one rule each).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>

#include "compile/compile_bindings.h"
#include "nanocuda/compile/program.h"
#include "nanocuda/driver/error.h"

namespace nb = nanobind;

namespace nanocuda::py {

// One folder or flag (str or os.PathLike) or an iterable of them: a str is never split.
std::vector<std::string> words(const nb::handle& v) {
  if (nb::isinstance<nb::str>(v)) return {nb::cast<std::string>(v)};
  if (nb::hasattr(v, "__fspath__")) return {fspath(v)};
  std::vector<std::string> out;
  for (nb::handle item : v) out.push_back(nb::isinstance<nb::str>(item) ? nb::cast<std::string>(item) : fspath(item));
  return out;
}

// Program.compile's name_expressions: one str or a list of them, named in the error.
std::vector<std::string> name_expressions_of(const nb::handle& v, const char* call) {
  if (v.is_none()) return {};
  if (nb::isinstance<nb::str>(v)) return {nb::cast<std::string>(v)};
  if (!PyIter_Check(v.ptr()) && !nb::hasattr(v, "__iter__"))
    throw TypeError(std::string(call) + ": name_expressions takes a str or a list of str, got " +
                    Py_TYPE(v.ptr())->tp_name);
  std::vector<std::string> out;
  for (nb::handle item : v) {
    if (!nb::isinstance<nb::str>(item))
      throw TypeError(std::string(call) + ": name_expressions items are str, got " + Py_TYPE(item.ptr())->tp_name +
                      " " + nb::cast<std::string>(nb::repr(item)));
    out.push_back(nb::cast<std::string>(item));
  }
  return out;
}

std::string text_arg(const nb::handle& v, const char* call, const char* param, const char* expected) {
  if (!nb::isinstance<nb::str>(v))
    throw TypeError(std::string(call) + ": " + param + " must be " + expected + ", got " + Py_TYPE(v.ptr())->tp_name +
                    " " + nb::cast<std::string>(nb::repr(v)));
  return nb::cast<std::string>(v);
}

namespace {

// cuda.core's define_macro: "N", ("N", "V"), or a list of either; or a dict {"N": V}
// (a None value defines the bare name).
std::vector<std::string> macros(const nb::handle& v) {
  if (nb::isinstance<nb::dict>(v) || nb::hasattr(v, "keys")) {
    std::vector<std::string> out;
    for (nb::handle key : nb::iter(v.attr("keys")())) {
      nb::object value = v[key];
      std::string name = nb::cast<std::string>(nb::str(key));
      out.push_back(value.is_none() ? name : name + "=" + nb::cast<std::string>(nb::str(value)));
    }
    return out;
  }
  auto one = [](const nb::handle& item) -> std::string {
    if (nb::isinstance<nb::str>(item)) return nb::cast<std::string>(item);
    if (nb::isinstance<nb::tuple>(item) && nb::len(item) == 2)
      return nb::cast<std::string>(nb::str(item[0])) + "=" + nb::cast<std::string>(nb::str(item[1]));
    throw TypeError("ProgramOptions: defines/define_macro items are 'NAME' or ('NAME', 'VALUE'), got " +
                    nb::cast<std::string>(nb::repr(item)));
  };
  if (nb::isinstance<nb::str>(v)) return {one(v)};
  if (nb::isinstance<nb::tuple>(v) && nb::len(v) == 2 && nb::isinstance<nb::str>(v[0]) && nb::isinstance<nb::str>(v[1]))
    return {one(v)};
  std::vector<std::string> out;
  for (nb::handle item : v) out.push_back(one(item));
  return out;
}

// cuda.core's extra_sources: ((name, source), ...) flattened to [name, source, ...].
std::vector<std::string> source_pairs(const nb::handle& v) {
  std::vector<std::string> out;
  for (nb::handle pair : v) {
    if (!nb::isinstance<nb::tuple>(pair) || nb::len(pair) != 2)
      throw TypeError("ProgramOptions: extra_sources takes (name, source) pairs");
    out.push_back(nb::cast<std::string>(pair[0]));
    nb::handle src = pair[1];
    if (nb::isinstance<nb::str>(src)) out.push_back(nb::cast<std::string>(src));
    else {
      nb::bytes b(nb::module_::import_("builtins").attr("bytes")(src));
      out.emplace_back(b.c_str(), b.size());
    }
  }
  return out;
}

// Python conversion only: the core's ProgramOptions::set knows every name and checks each value.
void set_program_option_unchecked(ProgramOptions& o, const std::string& key, const nb::handle& value) {
  if (key == "defines" || key == "define_macro") o.set(key, macros(value));
  else if (key == "include_dirs" || key == "extra_flags") o.set(key, words(value));
  else if (key == "extra_sources") o.set(key, source_pairs(value));
  else o.set(key, to_option_value("ProgramOptions", key, value));
}

}  // namespace

// A value of the wrong type (a str for max_registers, an int for defines) names the option
// instead of surfacing nanobind's bad_cast or Python's "not iterable".
void set_program_option(ProgramOptions& o, const std::string& key, const nb::handle& value) {
  if (value.is_none()) return;  // cuda.core's "not given"
  auto wrong = [&] {
    const char* wanted = key == "defines" || key == "define_macro"
                             ? "; it takes 'NAME' or 'NAME=VALUE', a list of them, or a dict {NAME: VALUE}"
                         : key == "include_dirs" || key == "include_path"
                             ? "; it takes a folder (str or os.PathLike) or a list of them"
                         : key == "extra_flags" ? "; it takes a str or a list of str"
                                                : "; see help(nanocuda.ProgramOptions) for each option's type";
    // In a list, name the item that is wrong (the list itself is fine).
    nb::handle culprit = value;
    if (nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value))
      for (nb::handle item : value)
        if (!nb::isinstance<nb::str>(item) && !nb::hasattr(item, "__fspath__") && !nb::isinstance<nb::tuple>(item)) {
          culprit = item;
          break;
        }
    std::string what = culprit.is(value) ? " has the wrong type (" : " has an item of the wrong type (";
    return TypeError("ProgramOptions: " + key + "=" + nb::cast<std::string>(nb::repr(value)) + what +
                     std::string(Py_TYPE(culprit.ptr())->tp_name) + ")" + wanted);
  };
  try {
    set_program_option_unchecked(o, key, value);
  } catch (const nb::cast_error&) {
    throw wrong();
  } catch (nb::python_error& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    throw wrong();
  }
}

// None -> default options; anything but a ProgramOptions is a TypeError naming the type.
ProgramOptions program_options_from(const nb::handle& options) {
  if (options.is_none()) return {};
  if (!nb::isinstance<ProgramOptions>(options))
    throw TypeError("Program: options must be a nanocuda.ProgramOptions, got " +
                    nb::cast<std::string>(nb::str(options.type().attr("__name__"))));
  return nb::cast<ProgramOptions>(options);
}

// The value a cuda.core option name reads back as (None when unset).
nb::object program_option(const ProgramOptions& o, const std::string& key) {
  if (key == "name") return o.name.empty() ? nb::none() : nb::cast(o.name);
  if (key == "use_fast_math") return nb::cast(o.fast_math);
  if (key == "max_register_count") return o.max_registers > 0 ? nb::cast(o.max_registers) : nb::none();
  if (key == "define_macro") return nb::cast(o.defines);
  if (key == "include_path") return nb::cast(o.include_dirs);
  if (key == "device_as_default_execution_space") return nb::cast(o.default_device);
  for (const auto& n : ProgramOptions::option_names())
    if (n == key) {
      const OptionValue* v = o.get(key);
      if (!v) return nb::none();
      return std::visit([](const auto& x) { return nb::cast(x); }, *v);
    }
  throw nb::attribute_error(("ProgramOptions has no option '" + key + "'").c_str());
}

OptionValue to_option_value(const char* owner, const std::string& option, const nb::handle& value) {
  if (PyBool_Check(value.ptr())) return nb::cast<bool>(value);
  if (nb::isinstance<nb::str>(value)) return nb::cast<std::string>(value);
  if (nb::isinstance<nb::bytes>(value)) {  // text as UTF-8 bytes: flags are text
    nb::bytes b = nb::borrow<nb::bytes>(value);
    nb::object text = nb::steal(PyUnicode_DecodeUTF8(b.c_str(), static_cast<Py_ssize_t>(b.size()), "strict"));
    if (!text.is_valid()) {
      PyErr_Clear();
      throw ValueError(std::string(owner) + ": option '" + option + "' = " +
                       nb::cast<std::string>(nb::repr(value)) + " is not UTF-8 text");
    }
    return std::string(b.c_str(), b.size());
  }
  if (nb::hasattr(value, "__fspath__")) return fspath(value);
  if (nb::hasattr(value, "__index__")) {
    nb::object n = value.attr("__index__")();
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(n.ptr(), &overflow);
    if (overflow)
      throw ValueError(std::string(owner) + ": option '" + option + "' = " +
                       nb::cast<std::string>(nb::str(n)) + " is out of range");
    if (v == -1 && PyErr_Occurred()) throw nb::python_error();
    return v;
  }
  // Any sequence (list, tuple, range, ...), as cuda.core iterates them; dicts are not sequences.
  if (PySequence_Check(value.ptr())) {
    std::vector<std::string> out;
    for (nb::handle item : value) {
      OptionValue v = to_option_value(owner, option, item);
      if (auto* s = std::get_if<std::string>(&v)) out.push_back(*s);
      else if (auto* n = std::get_if<long long>(&v)) out.push_back(std::to_string(*n));
      else throw TypeError(std::string(owner) + ": option '" + option + "' takes str or int items");
    }
    return out;
  }
  throw TypeError(std::string(owner) + ": option '" + option + "' cannot take a " +
                  nb::cast<std::string>(nb::str(value.type().attr("__name__"))));
}

}  // namespace nanocuda::py
