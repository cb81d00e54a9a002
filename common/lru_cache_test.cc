#include "common/lru_cache.h"

#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(LruCacheTest, ForgetsTheLeastRecentlyUsed) {
  LruCache<std::string, int> cache(2);
  cache.Insert("a", 1);
  cache.Insert("b", 2);
  ASSERT_NE(cache.Find("a"), nullptr);  // a is now the most recent
  cache.Insert("c", 3);                 // forgets b
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.Find("b"), nullptr);
  EXPECT_EQ(*cache.Find("a"), 1);
  EXPECT_EQ(*cache.Find("c"), 3);
  cache.Insert("c", 30);  // an update, not a new entry
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(*cache.Find("c"), 30);
}

TEST(LruCacheTest, StaysWithinItsCapacity) {
  LruCache<int, int> cache(100);
  for (int i = 0; i < 100000; ++i) cache.Insert(i, i);
  EXPECT_EQ(cache.size(), 100u);
  EXPECT_EQ(*cache.Find(99999), 99999);
  EXPECT_EQ(cache.Find(99899), nullptr);
}

}  // namespace
}  // namespace meridian
