// Reading CPython ints without the generic conversion, for hot paths (launch, TMA encode).
#pragma once

#include <Python.h>

#include <cstdint>

namespace nanocuda::py {

// Reads an int of at most two CPython digits (|v| < 2^60: every pointer and ordinary int)
// straight from the object, skipping the generic conversion; false for anything larger.
// Always inlined: a call costs as much as the read (graph[node].update reads two).
// `o` must be an int (PyLong_Check).
[[gnu::always_inline]] inline bool read_small_int(PyObject* o, long long* out) noexcept {
#if PyLong_SHIFT == 30 && !defined(Py_LIMITED_API)
  const auto* l = reinterpret_cast<const PyLongObject*>(o);
#if PY_VERSION_HEX >= 0x030C0000
  const std::uintptr_t tag = l->long_value.lv_tag;
  const std::uintptr_t ndigits = tag >> 3;             // _PyLong_NON_SIZE_BITS
  const long long sign = 1 - static_cast<long long>(tag & 3);  // 0: +, 1: zero, 2: -
  const digit* d = l->long_value.ob_digit;
#else
  const Py_ssize_t size = Py_SIZE(o);
  const std::uintptr_t ndigits = static_cast<std::uintptr_t>(size < 0 ? -size : size);
  const long long sign = size < 0 ? -1 : 1;
  const digit* d = l->ob_digit;
#endif
  if (ndigits == 0) {
    *out = 0;
    return true;
  }
  if (ndigits == 1) {
    *out = sign * static_cast<long long>(d[0]);
    return true;
  }
  if (ndigits == 2) {
    *out = sign * static_cast<long long>(d[0] | (static_cast<std::uint64_t>(d[1]) << 30));
    return true;
  }
#else
  (void)o;
  (void)out;
#endif
  return false;
}

}  // namespace nanocuda::py
