/* The mock's recording cuLaunchKernel (included by mock_libcuda.c; used only when asked for). */
/* NANOCUDA_MOCK_LAUNCH_FRAMES=FILE: each cuLaunchKernel appends its call stack to FILE, one
 * line per frame ("object +offset symbol", innermost first) and an empty line after, so a test
 * can count the frames between the Python call and the driver: the launch path's hops. It also
 * keeps the launch's grid x and the first parameter's first 8 bytes (nanocuda_mock_last_launch).
 * Unset, cuLaunchKernel stays the do-nothing `ok` (the instruction counts do not see this). */
#include <dlfcn.h>
#include <execinfo.h>
unsigned long long nanocuda_mock_last_launch[2];
static CUresult launch_frames(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned shm, void* stream, void** params,
                              void** extra) {
  void* frames[64];
  int n = backtrace(frames, 64);
  FILE* out = fopen(getenv("NANOCUDA_MOCK_LAUNCH_FRAMES"), "a");
  ++nanocuda_mock_calls;
  (void)f; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shm; (void)stream; (void)extra;
  nanocuda_mock_last_launch[0] = gx;
  nanocuda_mock_last_launch[1] = 0;
  if (params && params[0]) memcpy(&nanocuda_mock_last_launch[1], params[0], sizeof(unsigned long long));
  for (int i = 0; out && i < n; ++i) {
    Dl_info info = {0};
    const char* obj = "?";
    if (dladdr(frames[i], &info) && info.dli_fname) {
      obj = strrchr(info.dli_fname, '/');
      obj = obj ? obj + 1 : info.dli_fname;
    }
    /* The offset names hidden functions too: addr2line -fCe OBJECT OFFSET. */
    fprintf(out, "%s +0x%lx %s\n", obj, (unsigned long)((char*)frames[i] - (char*)info.dli_fbase),
            info.dli_sname ? info.dli_sname : "?");
  }
  if (out) { fputc('\n', out); fclose(out); }
  return 0;
}
