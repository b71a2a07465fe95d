// Handle ownership: the generic owner destroys exactly once, moves transfer, release gives up.
#include <gtest/gtest.h>

#include <type_traits>
#include <vector>

#include "nanocuda/driver/unique_handle.h"
#include "nanocuda/core/stream.h"

namespace {

std::vector<int> destroyed;
void destroy(int h) noexcept { destroyed.push_back(h); }
using Owner = nanocuda::detail::UniqueHandle<int, destroy>;

}  // namespace

TEST(UniqueHandle, DestroysOnceOnScopeExit) {
  destroyed.clear();
  { Owner a(7); }
  EXPECT_EQ(destroyed, std::vector<int>{7});
}

TEST(UniqueHandle, MoveTransfersOwnership) {
  destroyed.clear();
  {
    Owner a(3);
    Owner b(std::move(a));
    EXPECT_FALSE(a);
    EXPECT_EQ(b.get(), 3);
    Owner c(4);
    c = std::move(b);  // destroys 4, takes 3
    EXPECT_EQ(destroyed, std::vector<int>{4});
  }
  EXPECT_EQ(destroyed, (std::vector<int>{4, 3}));
}

TEST(UniqueHandle, ReleaseGivesUpWithoutDestroying) {
  destroyed.clear();
  {
    Owner a(9);
    EXPECT_EQ(a.release(), 9);
  }
  EXPECT_TRUE(destroyed.empty());
}

TEST(UniqueHandle, IsMoveOnly) {
  static_assert(!std::is_copy_constructible_v<Owner>);
  static_assert(std::is_nothrow_move_constructible_v<Owner>);
  static_assert(std::is_nothrow_destructible_v<Owner>);
}

TEST(Stream, CannotBeMadeFromZero) {
  static_assert(!std::is_constructible_v<nanocuda::Stream, std::nullptr_t>);
  static_assert(!std::is_convertible_v<int, nanocuda::Stream>);
}
