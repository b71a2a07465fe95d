// The record of errors seen in destructors, reported by the next checked call.
#include "nanocuda/driver/deferred_errors.h"

#include <deque>
#include <mutex>

#include "nanocuda/driver/error.h"

namespace nanocuda::detail {

std::atomic<bool> g_has_deferred_errors{false};

namespace {

struct Deferred {
  CUresult code;
  std::string call;
  std::string object;
};

std::mutex g_mutex;
std::deque<Deferred> g_errors;

}  // namespace

void record_deferred_error(CUresult code, const char* call, const char* object) noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_errors.push_back({code, call, std::string("in destructor of ") + object});
  } catch (...) {
    // Out of memory while recording: the flag below still makes the next check fail.
  }
  g_has_deferred_errors.store(true, std::memory_order_relaxed);
}

void record_deferred_failure(CUresult code, const char* call, std::string description) noexcept {
  try {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_errors.push_back({code, call, std::move(description)});
  } catch (...) {
  }
  g_has_deferred_errors.store(true, std::memory_order_relaxed);
}

void rethrow_deferred_error() {
  Deferred first{CUDA_ERROR_UNKNOWN, "destructor", "(details lost: out of memory)"};
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!g_errors.empty()) {
      first = std::move(g_errors.front());
      g_errors.pop_front();
    }
    g_has_deferred_errors.store(!g_errors.empty(), std::memory_order_relaxed);
  }
  throw Error(first.code, first.call, first.object + ", reported by the next checked call");
}

std::vector<std::string> take_deferred_errors() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::vector<std::string> out;
  for (auto& e : g_errors) out.push_back(Error(e.code, e.call, e.object).what());
  g_errors.clear();
  g_has_deferred_errors.store(false, std::memory_order_relaxed);
  return out;
}

}  // namespace nanocuda::detail
