// The example kernels (examples/kernels/*.cu) called from C++, each checked against the CPU.
//
//   ./nanocuda_example_kernels [KERNELS_DIR [INCLUDE_DIR]]
// Compiles each .cu file with NVRTC (cached), launches it with Kernel::bind or the one-off
// nanocuda::launch (argument sizes checked against the kernel), and compares with a CPU reference. hopper_gemm_fast runs
// only on an sm_90 device. Exits 0 when every result is correct.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include "nanocuda/nanocuda.h"

namespace {

std::string g_kernels = NANOCUDA_EXAMPLES_DIR;
std::string g_include = NANOCUDA_INCLUDE_DIR;
std::mt19937 g_rng(1234);

nanocuda::Kernel load(const std::string& file, const std::string& name, const std::string& arch = "") {
  nanocuda::ProgramOptions options;
  options.arch = arch;
  options.include_dirs = {g_include};
  return nanocuda::Program::from_file(g_kernels + "/" + file, options).compile().get_kernel(name);
}

std::vector<float> random_floats(std::size_t n) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(g_rng);
  return v;
}

// Host <-> device copies of whole vectors, in stream order.
template <class T>
void upload(const nanocuda::Buffer& dst, const std::vector<T>& src, const nanocuda::Stream& s) {
  nanocuda::copy_async(dst.ptr(), reinterpret_cast<CUdeviceptr>(src.data()), src.size() * sizeof(T), s);
}
template <class T>
void download(std::vector<T>& dst, const nanocuda::Buffer& src, const nanocuda::Stream& s) {
  nanocuda::copy_async(reinterpret_cast<CUdeviceptr>(dst.data()), src.ptr(), dst.size() * sizeof(T), s);
  s.sync();
}

bool report(const char* what, double max_error, double tolerance) {
  bool ok = max_error <= tolerance;
  std::printf("%-34s max |error| %.3g  %s\n", what, max_error, ok ? "correct" : "WRONG");
  return ok;
}

bool run_saxpy(const nanocuda::Stream& s) {
  const std::size_t n = 512 * 32768;
  const float a = 2.0f;
  auto k = load("saxpy.cu", "saxpy");
  auto x = random_floats(n), y = random_floats(n);
  std::vector<float> out(n);
  nanocuda::Buffer dx(n * 4, s), dy(n * 4, s), dout(n * 4, s);
  upload(dx, x, s);
  upload(dy, y, s);
  nanocuda::LaunchConfig config{{32768, 1, 1}, {512, 1, 1}};
  auto saxpy = k.bind(config, s);  // bound once: each call checks and launches
  saxpy(a, dx.ptr(), dy.ptr(), dout.ptr(), n);
  download(out, dout, s);
  double err = 0;
  for (std::size_t i = 0; i < n; ++i) err = std::fmax(err, std::fabs(out[i] - (a * x[i] + y[i])));
  return report("saxpy, 16M floats", err, 1e-6);
}

bool run_square(const nanocuda::Stream& s) {
  const long long n = 1 << 20;
  auto k = load("square.cu", "square");
  auto x = random_floats(n);
  std::vector<float> out(n);
  nanocuda::Buffer dx(n * 4, s), dout(n * 4, s);
  upload(dx, x, s);
  nanocuda::launch(s, nanocuda::LaunchConfig{{1024, 1, 1}, {256, 1, 1}}, k, dx.ptr(), dout.ptr(), n);
  download(out, dout, s);
  double err = 0;
  for (long long i = 0; i < n; ++i) err = std::fmax(err, std::fabs(out[i] - x[i] * x[i]));
  return report("square, 1M floats", err, 0);
}

bool run_matmul(const nanocuda::Stream& s, const char* name) {
  const int m = 300, n = 200, k = 170;
  auto kernel = load("matmul.cu", name);
  auto a = random_floats(std::size_t(m) * k), b = random_floats(std::size_t(k) * n);
  std::vector<float> c(std::size_t(m) * n);
  nanocuda::Buffer da(a.size() * 4, s), db(b.size() * 4, s), dc(c.size() * 4, s);
  upload(da, a, s);
  upload(db, b, s);
  nanocuda::LaunchConfig config{{unsigned(n + 15) / 16, unsigned(m + 15) / 16, 1}, {16, 16, 1}};
  nanocuda::launch(s, config, kernel, da.ptr(), db.ptr(), dc.ptr(), m, n, k);
  download(c, dc, s);
  double err = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = 0;
      for (int p = 0; p < k; ++p) ref += double(a[i * k + p]) * b[p * n + j];
      err = std::fmax(err, std::fabs(c[i * n + j] - ref));
    }
  return report((std::string(name) + ", 300x200x170").c_str(), err, 1e-3);
}

// IEEE fp16 <-> float on the host (round to nearest even; no infinities needed here).
std::uint16_t to_half(float f) {
  std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  f = std::fabs(f);
  if (f == 0) return sign;
  int e;
  float m = std::frexp(f, &e);  // f = m * 2^e, m in [0.5, 1)
  int biased = e - 1 + 15;
  if (biased <= 0) return sign | static_cast<std::uint16_t>(std::nearbyint(std::ldexp(f, 24)));
  int frac = static_cast<int>(std::nearbyint((2 * m - 1) * 1024));
  if (frac == 1024) frac = 0, ++biased;
  return sign | static_cast<std::uint16_t>(biased << 10 | frac);
}
float from_half(std::uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? std::ldexp(float(m), -24) : std::ldexp(float(m + 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}

// hopper_gemm_fast.cu defaults: 128×256 tiles, 64-wide K tiles, 4 stages, 384 threads.
constexpr int kBM = 128, kBN = 256, kBK = 64, kStages = 4;
constexpr std::uint32_t kGemmSmem = kStages * (kBM + kBN) * kBK * 2 + 1024 + 256;

// A row-major rows×cols fp16 matrix, read in (box_rows × 64) boxes with the 128B swizzle
// the kernel's wgmma descriptors expect.
nanocuda::TensorMap fp16_map(const nanocuda::Buffer& buf, std::uint64_t rows, std::uint64_t cols,
                             std::uint32_t box_rows) {
  nanocuda::TiledParams p;
  p.dtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  p.rank = 2;
  p.address = buf.ptr();
  p.shape = {rows, cols};
  p.box = {box_rows, kBK};
  p.options.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  return nanocuda::TensorMap::tiled(p);
}

bool run_hopper_gemm(const nanocuda::Stream& s, int m, int n, int k) {
  auto kernel = load("hopper_gemm_fast.cu", "hopper_gemm_f16", "sm_90a");
  std::vector<std::uint16_t> a(std::size_t(m) * k), b(std::size_t(n) * k), c(std::size_t(m) * n);
  for (auto& v : a) v = to_half(std::uniform_real_distribution<float>(-1, 1)(g_rng));
  for (auto& v : b) v = to_half(std::uniform_real_distribution<float>(-1, 1)(g_rng));
  nanocuda::Buffer da(a.size() * 2, s), db(b.size() * 2, s), dc(c.size() * 2, s);
  upload(da, a, s);
  upload(db, b, s);
  // Persistent: one block per SM at most, each looping over 128×256 output tiles.
  const unsigned tiles = unsigned((m + kBM - 1) / kBM) * unsigned((n + kBN - 1) / kBN);
  const unsigned sms = unsigned(s.device().multiprocessor_count());
  nanocuda::LaunchConfig config{{tiles < sms ? tiles : sms, 1, 1}, {384, 1, 1}, kGemmSmem};
  nanocuda::launch(s, config, kernel, fp16_map(da, m, k, kBM), fp16_map(db, n, k, kBN),
                   dc.ptr(), m, n, k);
  download(c, dc, s);
  double err = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = 0;
      for (int p = 0; p < k; ++p) ref += double(from_half(a[i * k + p])) * from_half(b[j * k + p]);
      err = std::fmax(err, std::fabs(from_half(c[i * n + j]) - ref) / (1 + std::fabs(ref)));
    }
  std::string what = "hopper_gemm_fast, " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  return report(what.c_str(), err, 2e-3);
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc > 1) g_kernels = argv[1];
  if (argc > 2) g_include = argv[2];
  nanocuda::Device device(0);
  auto stream = nanocuda::Stream::create(device);
  bool ok = run_saxpy(stream) & run_square(stream);
  ok &= run_matmul(stream, "matmul_naive") & run_matmul(stream, "matmul_tiled");
  if (device.arch() == "90a" || device.arch() == "90") {
    ok &= run_hopper_gemm(stream, 512, 512, 512) & run_hopper_gemm(stream, 256, 512, 384) &
          run_hopper_gemm(stream, 200, 136, 72) & run_hopper_gemm(stream, 300, 520, 264);
  } else {
    std::printf("hopper_gemm skipped: it is compiled for sm_90a, device 0 is sm_%s\n", device.arch().c_str());
  }
  return ok ? 0 : 1;
} catch (const std::exception& e) {  // nanocuda::Error, CompileError, ValueError
  std::fprintf(stderr, "nanocuda: %s\n", e.what());
  return 2;
}
