// The C++ face speaks C++: core errors name the C++ call (call() and what()), and StreamRef views streams.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "nanocuda/nanocuda.h"

namespace {

using nanocuda::Buffer;
using nanocuda::Device;
using nanocuda::Stream;
using nanocuda::StreamRef;

bool on_mock() { return std::getenv("NANOCUDA_MOCK_CURRENT_DEVICE") != nullptr; }

// cuStreamDestroy calls so far (the mock nanocuda loaded: dlopen of its path gives the same copy).
unsigned long long stream_destroys() {
  void* lib = dlopen(std::getenv("NANOCUDA_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return ~0ull;
  auto* n = static_cast<unsigned long long*>(dlsym(lib, "nanocuda_mock_stream_destroys"));
  unsigned long long v = n ? *n : ~0ull;
  dlclose(lib);
  return v;
}

// The call() and what() of the ValueError `f` throws; "(no ValueError)" when it throws none.
template <class F>
std::pair<std::string, std::string> value_error_of(F&& f) {
  try {
    f();
  } catch (const nanocuda::ValueError& e) {
    return {e.call(), e.what()};
  }
  return {"(no ValueError)", ""};
}

TEST(CxxNames, ValueErrorCarriesTheCallApart) {
  nanocuda::ValueError e("Buffer::adopt", "the pointer is 0");
  EXPECT_EQ(e.call(), "Buffer::adopt");
  EXPECT_STREQ(e.what(), "Buffer::adopt: the pointer is 0");
  nanocuda::ValueError whole("a whole message");  // the older form: no call
  EXPECT_TRUE(whole.call().empty());
  EXPECT_STREQ(whole.what(), "a whole message");
  nanocuda::StateError s("GraphBuilder::end_building", "not building");
  EXPECT_EQ(s.call(), "GraphBuilder::end_building");
  nanocuda::TypeError t("Linker::add", "not an ObjectCode");
  EXPECT_STREQ(t.what(), "Linker::add: not an ObjectCode");
}

TEST(CxxNames, CoreErrorsNameTheCppCall) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  StreamRef s = StreamRef::legacy(Device(0));
  auto [call, what] = value_error_of([&] { (void)Buffer::adopt(0, 64, s, nullptr); });
  EXPECT_EQ(call, "Buffer::adopt");
  EXPECT_EQ(what, "Buffer::adopt: the pointer is 0");

  std::tie(call, what) = value_error_of([&] { (void)nanocuda::Kernel::from_handle(nullptr); });
  EXPECT_EQ(call, "Kernel::from_handle");
  EXPECT_EQ(what.rfind("Kernel::from_handle: the handle is 0", 0), 0u) << what;

  Buffer b(64, s);
  std::tie(call, what) = value_error_of([&] { nanocuda::fill_async(b.ptr(), 1, 3, 64, s); });
  EXPECT_EQ(call, "nanocuda::fill_async");
  EXPECT_NE(what.find("width must be 1, 2 or 4 bytes, got 3"), std::string::npos) << what;

  std::tie(call, what) = value_error_of([&] { nanocuda::enable_peer_access(Device(0), Device(0)); });
  EXPECT_EQ(call, "nanocuda::enable_peer_access");

  std::tie(call, what) = value_error_of([&] { (void)nanocuda::Linker().link(); });
  EXPECT_EQ(what, "Linker::link: no inputs were added");

  std::tie(call, what) = value_error_of([&] { (void)nanocuda::Program::from_file("/"); });
  EXPECT_EQ(call, "Program::from_file");
  EXPECT_NE(what.find("is a folder"), std::string::npos) << what;

  nanocuda::Event e(Device(0));
  e.close();
  std::tie(call, what) = value_error_of([&] { e.sync(); });
  EXPECT_EQ(call, "Event::sync");
  std::tie(call, what) = value_error_of([&] { b.set_deallocation_stream(StreamRef::legacy(Device(1))); });
  EXPECT_EQ(call, "Buffer::set_deallocation_stream");
  EXPECT_NE(what.find("is on device 1"), std::string::npos) << what;
  EXPECT_EQ(what.find("Buffer.set_deallocation_stream"), std::string::npos) << what;  // no Python spelling
}

TEST(StreamRefMock, ViewsAStreamWithoutOwningIt) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  Stream owned = Stream::create(Device(0));
  StreamRef view = owned;  // a Stream is a StreamRef
  EXPECT_EQ(view.handle(), owned.handle());
  EXPECT_EQ(view.device_ordinal(), 0);
  EXPECT_TRUE(view.views_owned_stream());
  EXPECT_EQ(view.owner(), owned);  // the viewed Stream itself, not a copy of its handle
  Buffer b(64, view);               // APIs take a StreamRef
  EXPECT_EQ(b.device().ordinal(), 0);
  view.sync();
  EXPECT_TRUE(view.query());

  auto raw = reinterpret_cast<CUstream>(std::uintptr_t{0x1234});
  StreamRef foreign(raw, Device(1));
  EXPECT_FALSE(foreign.views_owned_stream());
  EXPECT_FALSE(foreign.owner().has_value());  // a foreign stream has no Stream: nanocuda never owns it
  EXPECT_EQ(foreign.raw_handle(), raw);
  EXPECT_EQ(foreign.device().ordinal(), 1);
  EXPECT_EQ(foreign, StreamRef(raw, Device(1)));
  EXPECT_NE(foreign.describe().find("not owned"), std::string::npos) << foreign.describe();

  owned.close();
  auto [call, what] = value_error_of([&] { (void)view.handle(); });
  EXPECT_EQ(call, "StreamRef::handle");
  static_assert(!std::is_constructible_v<StreamRef, std::nullptr_t>);
  static_assert(!std::is_constructible_v<StreamRef, int>);
}

TEST(StreamOwnershipMock, OnlyTheOwnerDestroysTheCUstream) {
  if (!on_mock()) GTEST_SKIP() << "runs under ctest, on tools/mock_libcuda.c";
  const unsigned long long before = stream_destroys();
  ASSERT_NE(before, ~0ull) << "the mock's counter is not reachable";
  CUstream raw = nullptr;
  {
    Stream owned = Stream::create(Device(0));
    raw = owned.raw_handle();
    {
      Stream moved = std::move(owned);  // ownership travels with the move, nothing is destroyed
      StreamRef viewed(raw, Device(0));   // a foreign view of the same CUstream
      EXPECT_FALSE(viewed.views_owned_stream());
      viewed.sync();
      StreamRef adopted = StreamRef::from_handle(raw, 0);
      EXPECT_FALSE(adopted.owner().has_value());
      owned = moved;  // a second reference to the owner's state
    }
    EXPECT_EQ(stream_destroys(), before);  // the views and the moved-from copy did not
  }
  EXPECT_EQ(stream_destroys(), before + 1);  // the last owner did, once
  Stream closed = Stream::create(Device(0));
  closed.close();  // the owner destroys at close(), and not again at the last reference
  EXPECT_EQ(stream_destroys(), before + 2);
  { Stream again = closed; }
  EXPECT_EQ(stream_destroys(), before + 2);
}

}  // namespace
