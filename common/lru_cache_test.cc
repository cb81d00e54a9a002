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

TEST(LruCacheTest, GetMakesWhatIsAbsentAndPeekLeavesTheOrder) {
  LruCache<std::string, int> cache(2);
  cache.Get("a") += 1;
  cache.Get("a") += 1;
  cache.Get("b") = 5;
  EXPECT_EQ(*cache.Peek("a"), 2);  // a stays the least recently used
  cache.Get("c");                  // forgets a
  EXPECT_EQ(cache.Peek("a"), nullptr);
  EXPECT_EQ(*cache.Peek("b"), 5);
  EXPECT_EQ(*cache.Peek("c"), 0);
  *cache.Find("b") = 6;
  EXPECT_EQ(*cache.Peek("b"), 6);
}

}  // namespace
}  // namespace meridian
