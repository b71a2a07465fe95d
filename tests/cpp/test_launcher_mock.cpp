// The C++ Launcher on its own and launch() as a temporary Launcher, on the mock driver: argument
// checks, the parameter buffer it owns, re-entrant packing, moves.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "nanocuda/nanocuda.h"

namespace {

using nanocuda::Launcher;
using nanocuda::LaunchConfig;
using nanocuda::ParamPacker;

bool on_mock() { return std::getenv("NANOCUDA_MOCK_CURRENT_DEVICE") != nullptr; }

// The mock's kernels take (const void*, const void*, void*, int): offsets 0, 8, 16, 24.
nanocuda::Kernel mock_kernel() {
  return nanocuda::Kernel::from_handle(reinterpret_cast<CUkernel>(std::uintptr_t{0x1000}));
}
LaunchConfig config() { return LaunchConfig{{2, 1, 1}, {32, 1, 1}}; }
nanocuda::StreamRef stream() { return nanocuda::StreamRef::legacy(nanocuda::Device(1)); }

std::uint64_t slot(const Launcher& l, std::size_t i) {
  std::uint64_t v = 0;
  std::memcpy(&v, l.params().pointers()[i], i == 3 ? 4 : 8);
  return v;
}

TEST(LauncherMock, TypedCallsAreCheckedAgainstTheKernelsLayout) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Launcher l(mock_kernel(), config(), stream());
  const void* p = nullptr;
  EXPECT_NO_THROW(l(p, p, p, 4));
  try {
    l(p, p);
    FAIL() << "a short call launched";
  } catch (const nanocuda::TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("takes 4 arguments, got 2"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(l(p, p, p, std::uint64_t{4}), nanocuda::ValueError);  // 8 bytes for an int
}

TEST(LauncherMock, PackAndLaunchWritesTheBufferItOwns) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Launcher l(mock_kernel(), config(), stream());
  l.pack_and_launch(l.stream(), [&](ParamPacker& p) {
    EXPECT_EQ(p.params(), l.params().pointers());
    p.write_pointer(0, 0xA0);
    p.write_pointer(1, 0xB0);
    p.write_pointer(2, 0xC0);
    p.write_int(3, 7);
  });
  EXPECT_EQ(slot(l, 0), 0xA0u);
  EXPECT_EQ(slot(l, 2), 0xC0u);
  EXPECT_EQ(slot(l, 3), 7u);
}

TEST(LauncherMock, ANestedCallPacksIntoABufferOfItsOwn) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Launcher l(mock_kernel(), config(), stream());
  int nested = 0;
  l.pack_and_launch(l.stream(), [&](ParamPacker& outer) {
    EXPECT_EQ(outer.params(), l.params().pointers());
    outer.write_pointer(0, 0x1111);
    // What a Python property read during packing can do: call the same Launcher again.
    EXPECT_FALSE(l.try_pack_and_launch(l.stream(), [](ParamPacker&) { FAIL() << "packed"; }));
    l.pack_and_launch(l.stream(), [&](ParamPacker& inner) {
      ++nested;
      EXPECT_NE(inner.params(), l.params().pointers());
      inner.write_pointer(0, 0x2222);
    });
    outer.write_pointer(1, 0x3333);
  });
  EXPECT_EQ(nested, 1);
  EXPECT_EQ(slot(l, 0), 0x1111u);  // the nested call's bytes never reached the shared buffer
  EXPECT_EQ(slot(l, 1), 0x3333u);
  EXPECT_TRUE(l.try_pack_and_launch(l.stream(), [](ParamPacker&) {}));  // free again
}

TEST(LauncherMock, AThrowingPackLaunchesNothingAndFreesTheBuffer) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Launcher l(mock_kernel(), config(), stream());
  EXPECT_THROW(l.pack_and_launch(l.stream(), [](ParamPacker& p) { p.write_bool(0, true); }),
               nanocuda::ValueError);  // a bool into an 8-byte parameter
  EXPECT_TRUE(l.try_pack_and_launch(l.stream(), [](ParamPacker&) {}));  // not left busy
}

TEST(LauncherMock, AMovedLauncherPacksIntoItsOwnBuffer) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Launcher a(mock_kernel(), config(), stream());
  Launcher b(std::move(a));
  b.pack_and_launch(b.stream(), [&](ParamPacker& p) {
    EXPECT_EQ(p.params(), b.params().pointers());
    p.write_int(3, 9);
  });
  EXPECT_EQ(slot(b, 3), 9u);
  Launcher c(mock_kernel(), LaunchConfig{{1, 1, 1}, {1, 1, 1}}, stream());
  c = std::move(b);
  EXPECT_EQ(c.config().grid.x, 2u);
  c.pack_and_launch(c.stream(), [&](ParamPacker& p) {
    EXPECT_EQ(p.params(), c.params().pointers());
    p.write_int(3, 11);
  });
  EXPECT_EQ(slot(c, 3), 11u);
  EXPECT_EQ(c.kernel().bind(config(), stream()).config().grid.x, 2u);  // Kernel::bind is one
}

TEST(LauncherMock, OneOffLaunchIsATemporaryLauncher) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  const void* p = nullptr;
  EXPECT_NO_THROW(nanocuda::launch(stream(), config(), mock_kernel(), p, p, p, 4));
  EXPECT_THROW(nanocuda::launch(stream(), config(), mock_kernel(), p), nanocuda::TypeError);
  EXPECT_THROW(nanocuda::launch(stream(), config(), mock_kernel(), p, p, p, 4.0),
               nanocuda::ValueError);
  // The Launcher's config checks too: a block of 0 threads is refused before the driver.
  EXPECT_THROW(
      nanocuda::launch(stream(), LaunchConfig{{1, 1, 1}, {0, 1, 1}}, mock_kernel(), p, p, p, 4),
      nanocuda::ValueError);
  int calls = 0;
  Launcher::launch_once(stream(), config(), mock_kernel(), [&](ParamPacker& pk) {
    ++calls;
    pk.check_count(4);
  });
  EXPECT_EQ(calls, 1);
}

}  // namespace
