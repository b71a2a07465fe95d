// Ahead-of-time artefacts on the CPU: the fatbin writer/reader, kernels and layouts from a cubin, the manifest.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "nanocuda/compile/aot_manifest.h"
#include "nanocuda/compile/cubin_info.h"
#include "nanocuda/compile/fatbin.h"
#include "nanocuda/compile/program.h"
#include "nanocuda/driver/error.h"

namespace {

namespace fs = std::filesystem;
using nanocuda::FatbinEntry;

// Parameters with different sizes and alignments, so the offsets are worth checking.
const char* kSource = R"(
struct Pair { int a[5]; char c; };
extern "C" __global__ void axpy(float* y, const float* x, int n, double a) {
  int i = threadIdx.x; if (i < n) y[i] += a * x[i];
}
extern "C" __global__ void mixed(Pair p, short s, float4 v) {}
)";

std::string compile_for(const std::string& arch, nanocuda::CodeType type) {
  nanocuda::ProgramOptions o;
  o.arch = arch;
  return nanocuda::Program(kSource, o, "aot.cu").compile(type).bytes();
}

TEST(Aot, TargetsParseAndFit) {
  auto sm80 = nanocuda::fatbin_target("sm_80");
  EXPECT_EQ(sm80.kind, FatbinEntry::Kind::elf);
  EXPECT_TRUE(sm80.fits(86));    // a cubin runs on later minors of its major
  EXPECT_FALSE(sm80.fits(90));   // not across majors
  auto sm90a = nanocuda::fatbin_target("sm_90a");
  EXPECT_TRUE(sm90a.arch_specific);
  EXPECT_TRUE(sm90a.fits(90));
  EXPECT_FALSE(sm90a.fits(100));
  auto ptx = nanocuda::fatbin_target("compute_80");
  EXPECT_EQ(ptx.kind, FatbinEntry::Kind::ptx);
  EXPECT_TRUE(ptx.fits(120));    // the driver JITs PTX for any later device
  EXPECT_FALSE(ptx.fits(75));
  EXPECT_EQ(nanocuda::fatbin_target("compute_100a").arch_name(), "compute_100a");
  EXPECT_THROW((void)nanocuda::fatbin_target("90a"), nanocuda::ValueError);
  EXPECT_THROW((void)nanocuda::fatbin_target("sm_100f"), nanocuda::ValueError);
}

TEST(Aot, FatbinRoundTripsEveryImage) {
  std::vector<FatbinEntry> in;
  for (const char* t : {"sm_80", "sm_90a", "compute_90"}) {
    FatbinEntry e = nanocuda::fatbin_target(t);
    e.bytes = compile_for(t, e.kind == FatbinEntry::Kind::ptx ? nanocuda::CodeType::ptx : nanocuda::CodeType::cubin);
    if (e.kind == FatbinEntry::Kind::ptx && !e.bytes.empty() && e.bytes.back() == '\0') e.bytes.pop_back();
    in.push_back(e);
  }
  std::string fatbin = nanocuda::make_fatbin(in);
  EXPECT_EQ(fatbin.size() % 8, 0u);
  auto out = nanocuda::fatbin_entries(fatbin);
  ASSERT_EQ(out.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(out[i].arch_name(), in[i].arch_name());
    // Cubins come back padded to 8 bytes; the ELF is unchanged in front of the padding.
    EXPECT_EQ(out[i].bytes.substr(0, in[i].bytes.size()), in[i].bytes);
  }
  EXPECT_EQ(out[2].bytes, in[2].bytes);  // PTX: exactly the text, NUL and padding dropped
  EXPECT_THROW((void)nanocuda::fatbin_entries("not a fatbin at all"), nanocuda::ValueError);
  EXPECT_THROW((void)nanocuda::fatbin_entries(fatbin.substr(0, 100)), nanocuda::ValueError);
}

TEST(Aot, CubinKernelsAndLayoutsWithoutADriver) {
  auto kernels = nanocuda::cubin_kernels(compile_for("90a", nanocuda::CodeType::cubin));
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].name, "axpy");
  ASSERT_EQ(kernels[0].layout.count(), 4u);
  EXPECT_EQ(kernels[0].layout.params[2].offset, 16u);  // int n
  EXPECT_EQ(kernels[0].layout.params[2].size, 4u);
  EXPECT_EQ(kernels[0].layout.params[3].offset, 24u);  // double a, 8-aligned
  EXPECT_EQ(kernels[1].name, "mixed");
  ASSERT_EQ(kernels[1].layout.count(), 3u);
  EXPECT_EQ(kernels[1].layout.params[0].size, 24u);    // Pair
  EXPECT_EQ(kernels[1].layout.params[1].offset, 24u);  // short
  EXPECT_EQ(kernels[1].layout.params[2].offset, 32u);  // float4, 16-aligned
  EXPECT_EQ(kernels[1].layout.total_size(), 48u);
  EXPECT_THROW((void)nanocuda::cubin_kernels("\x7f" "ELF short"), nanocuda::ValueError);
}

TEST(Aot, ManifestRoundTripsAndOpensBesideTheFatbin) {
  fs::path dir = fs::temp_directory_path() / ("nanocuda_aot_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "common.h") << "#define SCALE 2\n";
  const std::string source = std::string("#include \"common.h\"\n") + kSource;

  nanocuda::AotManifest m;
  m.source = "aot.cu";
  m.source_hash = nanocuda::aot_source_hash(source, dir.string(), {});
  m.options = {"defines=[\"N=1\"]", "std=\"c++17\""};
  m.nvrtc_version = 13000;
  m.targets = {"sm_90a", "compute_80"};
  std::string cubin = compile_for("90a", nanocuda::CodeType::cubin);
  m.kernels = nanocuda::cubin_kernels(cubin);
  auto back = nanocuda::AotManifest::parse(m.to_json());
  EXPECT_EQ(back.source_hash, m.source_hash);
  EXPECT_EQ(back.options, m.options);
  EXPECT_EQ(back.targets, m.targets);
  ASSERT_EQ(back.kernels.size(), 2u);
  EXPECT_EQ(back.kernels[1].layout.params[2].offset, 32u);
  EXPECT_THROW((void)nanocuda::AotManifest::parse("{\"format\": \"other\"}"), nanocuda::ValueError);
  EXPECT_THROW((void)nanocuda::AotManifest::parse("{\"format\": "), nanocuda::ValueError);

  FatbinEntry e = nanocuda::fatbin_target("sm_90a");
  e.bytes = cubin;
  std::ofstream(dir / "aot.fatbin", std::ios::binary) << nanocuda::make_fatbin({e});
  std::ofstream(dir / "aot.fatbin.json") << m.to_json();
  auto pre = nanocuda::PrebuiltModule::open((dir / "aot.fatbin").string());
  EXPECT_EQ(pre.code.type(), nanocuda::CodeType::fatbin);
  EXPECT_TRUE(pre.matches(source, dir.string(), {}, m.options));
  EXPECT_FALSE(pre.matches(source, dir.string(), {}, {}));        // other options
  EXPECT_FALSE(pre.matches(source + " ", dir.string(), {}, m.options));  // edited source
  std::ofstream(dir / "common.h") << "#define SCALE 3\n";
  EXPECT_FALSE(pre.matches(source, dir.string(), {}, m.options));  // edited local header
  EXPECT_EQ(pre.targets_for(90), (std::vector<std::string>{"sm_90a", "compute_80"}));
  EXPECT_EQ(pre.targets_for(75), std::vector<std::string>{});
  EXPECT_THROW((void)nanocuda::PrebuiltModule::open((dir / "missing.fatbin").string()), nanocuda::ValueError);
  fs::remove_all(dir);
}

}  // namespace
