// Stream owns, StreamRef views: the CUstream a view names reaches the driver, only owners destroy.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "mock_values.h"
#include "nanocuda/nanocuda.h"

namespace {

using nanocuda::Buffer;
using nanocuda::Device;
using nanocuda::LaunchConfig;
using nanocuda::Launcher;
using nanocuda::Stream;
using nanocuda::StreamRef;

using nanocuda_test::mock_value;
using nanocuda_test::on_mock;
unsigned long long stream_destroys() { return mock_value<unsigned long long>("nanocuda_mock_stream_destroys"); }
void* last_stream() { return mock_value<void*>("nanocuda_mock_last_stream"); }

nanocuda::Kernel mock_kernel() {  // the mock's kernels take (const void*, const void*, void*, int)
  return nanocuda::Kernel::from_handle(reinterpret_cast<CUkernel>(std::uintptr_t{0x1000}));
}
LaunchConfig config() { return LaunchConfig{{2, 1, 1}, {32, 1, 1}}; }

TEST(StreamRefMock, IsACheapValue) {
  static_assert(std::is_trivially_copyable_v<StreamRef>);
  static_assert(sizeof(StreamRef) == 2 * sizeof(void*));  // passed in two registers
  static_assert(std::is_convertible_v<const Stream&, StreamRef>);  // a Stream is usable as a view
  static_assert(!std::is_convertible_v<StreamRef, Stream>);        // a view never becomes an owner silently
  static_assert(!std::is_constructible_v<StreamRef, std::nullptr_t>);
}

TEST(StreamRefMock, AForeignCUstreamWorksWithLaunchAndCopy) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  const unsigned long long destroys = stream_destroys();
  auto raw = reinterpret_cast<CUstream>(std::uintptr_t{0xABC0});
  StreamRef foreign(raw, Device(1));
  EXPECT_EQ(foreign.device_ordinal(), 1);
  EXPECT_FALSE(foreign.views_owned_stream());
  const void* p = nullptr;
  nanocuda::launch(foreign, config(), mock_kernel(), p, p, p, 4);  // typed one-off launch
  EXPECT_EQ(last_stream(), static_cast<void*>(raw));
  Launcher bound(mock_kernel(), config(), foreign);
  EXPECT_EQ(bound.stream(), foreign);
  bound(p, p, p, 5);
  EXPECT_EQ(last_stream(), static_cast<void*>(raw));
  nanocuda::copy_async(0x7f0000001000ull, 0x7f0000002000ull, 64, foreign);
  EXPECT_EQ(last_stream(), static_cast<void*>(raw));
  {
    Buffer b(64, foreign);  // allocated and freed in the foreign stream's order
    EXPECT_EQ(b.stream().raw_handle(), raw);
  }
  foreign.sync();
  EXPECT_EQ(stream_destroys(), destroys);  // nothing nanocuda did not create is destroyed
}

TEST(StreamRefMock, ALauncherKeepsItsStreamAliveAndANewStreamIsDestroyedOnce) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  const unsigned long long destroys = stream_destroys();
  {
    Launcher bound(mock_kernel(), config(), Stream::create(Device(0)));  // the only owner is the temporary
    EXPECT_EQ(stream_destroys(), destroys);  // kept alive by the Launcher
    const void* p = nullptr;
    bound(p, p, p, 1);
    EXPECT_EQ(last_stream(), static_cast<void*>(bound.stream().raw_handle()));
    Launcher moved = std::move(bound);
    EXPECT_EQ(stream_destroys(), destroys);
  }
  EXPECT_EQ(stream_destroys(), destroys + 1);  // the last holder destroyed it, once
}

TEST(StreamRefMock, AClosedStreamUsedThroughAViewIsAClearError) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Stream s = Stream::create(Device(0));
  StreamRef view = s;
  Launcher bound(mock_kernel(), config(), s);
  s.close();
  const void* p = nullptr;
  for (auto use : {+[](StreamRef v) { v.sync(); },
                   +[](StreamRef v) { nanocuda::copy_async(0x7f0000001000ull, 0x7f0000002000ull, 8, v); },
                   +[](StreamRef v) {
                     const void* q = nullptr;
                     nanocuda::launch(v, config(), mock_kernel(), q, q, q, 1);
                   }}) {
    try {
      use(view);
      ADD_FAILURE() << "a closed stream was used";
    } catch (const nanocuda::ValueError& e) {
      EXPECT_EQ(e.call(), "StreamRef::handle");
      EXPECT_NE(std::string(e.what()).find("closed"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(bound(p, p, p, 1), nanocuda::ValueError);
}

TEST(StreamRefMock, AStreamAlwaysOwnsAndItsLastHolderDestroysItOnce) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  static_assert(!std::is_constructible_v<Stream, CUstream>);  // no adopting constructor: foreign streams are StreamRefs
  const unsigned long long destroys = stream_destroys();
  {
    Stream a = Stream::create(Device(0));
    Stream copy = a;                // copies share one state
    Stream moved = std::move(a);    // and so does a move
    {
      Buffer b(64, copy);           // a Buffer keeps its allocation stream alive
      copy = Stream::create(Device(0));  // a second stream: its old value's share is dropped
      moved = copy;                 // the first stream's last Stream object is gone...
      EXPECT_EQ(stream_destroys(), destroys);  // ...but the Buffer still holds it
      EXPECT_TRUE(b.stream().views_owned_stream());
    }  // the Buffer frees its memory on the stream, then lets it go
    EXPECT_EQ(stream_destroys(), destroys + 1);
  }
  EXPECT_EQ(stream_destroys(), destroys + 2);  // each stream destroyed once, by its last holder
  {  // the implicit streams and adopted handles are views: nothing to destroy, ever
    StreamRef legacy = StreamRef::legacy(Device(0)), per_thread = StreamRef::per_thread(Device(1));
    EXPECT_EQ(legacy.raw_handle(), CU_STREAM_LEGACY);
    EXPECT_EQ(per_thread.raw_handle(), CU_STREAM_PER_THREAD);
    EXPECT_EQ(per_thread.device_ordinal(), 1);
    StreamRef adopted = StreamRef::from_handle(reinterpret_cast<CUstream>(std::uintptr_t{0xAB00}), 1);
    Buffer b(64, adopted);
    EXPECT_FALSE(b.stream().owner().has_value());
    legacy.sync();
    adopted.sync();
  }
  EXPECT_EQ(stream_destroys(), destroys + 2);
}

TEST(StreamRefMock, AKeptStreamHoldsANanocudaStreamAndNothingForAForeignOne) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  const unsigned long long destroys = stream_destroys();
  std::optional<nanocuda::KeptStream> kept;
  kept.emplace(Stream::create(Device(0)));  // the temporary Stream is gone after this line
  EXPECT_EQ(stream_destroys(), destroys);
  kept->sync();
  kept.reset();
  EXPECT_EQ(stream_destroys(), destroys + 1);
  nanocuda::KeptStream foreign(StreamRef::legacy(Device(0)));
  EXPECT_FALSE(foreign.views_owned_stream());
}

}  // namespace
