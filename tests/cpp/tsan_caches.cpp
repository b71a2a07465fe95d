// ThreadSanitizer target (scripts/test-sanitizers builds it with -fsanitize=thread): the
// C++ caches other threads share — the compile cache, deferred destructor errors, the
// driver loader and its remembered failure — hammered from 8 threads. Exits non-zero on a
// wrong result; TSan reports races itself.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "nanocuda/compile/compile_cache.h"
#include "nanocuda/driver/deferred_errors.h"
#include "nanocuda/driver/driver_api.h"
#include "nanocuda/driver/error.h"

int main() {
  using namespace nanocuda;
  char tmpl[] = "/tmp/nanocuda-tsan.XXXXXX";
  if (!::mkdtemp(tmpl)) return 2;
  ::setenv("NANOCUDA_CACHE_DIR", tmpl, 1);
  ::setenv("NANOCUDA_CACHE_MAX_BYTES", "40000", 1);  // evictions run concurrently too
  ::setenv("NANOCUDA_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < 300; ++i) {
        const std::string key = "k" + std::to_string((t * 7 + i) % 40);
        const std::string payload(500 + (t * 7 + i) % 40, 'a' + (t * 7 + i) % 40 % 26);
        CompileCache::store(key, payload);
        if (auto got = CompileCache::load(key); got && *got != payload) ++failures[t];
        if (i % 50 == 0) CompileCache::clear_memory();
        if (i % 20 == 0) (void)CompileCache::info();
        detail::record_deferred_error(CUDA_ERROR_INVALID_VALUE, "cuTest", "thing");
        if (detail::has_deferred_errors()) (void)detail::take_deferred_errors();
        try {
          (void)detail::driver();
          ++failures[t];  // there is no driver at that path
        } catch (const DriverNotFoundError&) {
        }
      }
    });
  for (auto& th : threads) th.join();
  std::system((std::string("rm -rf ") + tmpl).c_str());
  int bad = 0;
  for (int f : failures) bad += f;
  std::printf("tsan_caches: 8 threads x 300 rounds, %d wrong results\n", bad);
  return bad == 0 ? 0 : 1;
}
