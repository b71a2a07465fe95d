// The C++ mock tests' view of tools/mock_libcuda.c: whether it is loaded, and its counters.
#pragma once

#include <dlfcn.h>

#include <cstdlib>

namespace nanocuda_test {

// ctest runs the mock tests with the mock's settings; run by hand without them, they skip.
inline bool on_mock() { return std::getenv("NANOCUDA_MOCK_CURRENT_DEVICE") != nullptr; }

// A variable of the mock nanocuda loaded (dlopen of its path gives the same copy); T{} if absent.
template <class T>
T mock_value(const char* name) {
  void* lib = dlopen(std::getenv("NANOCUDA_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return T{};
  auto* v = static_cast<T*>(dlsym(lib, name));
  T out = v ? *v : T{};
  dlclose(lib);
  return out;
}

}  // namespace nanocuda_test
