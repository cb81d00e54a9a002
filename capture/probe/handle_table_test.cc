#include "capture/probe/handle_table.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

struct Value {
  int64_t a;
  int32_t b;
};

TEST(HandleTableTest, InsertFindTake) {
  static HandleTable<Value, 64> table;
  EXPECT_EQ(table.Find(0x1000), nullptr);
  ASSERT_TRUE(table.Insert(0x1000, {7, 1}));
  ASSERT_TRUE(table.Insert(0x2000, {8, 2}));
  ASSERT_NE(table.Find(0x1000), nullptr);
  EXPECT_EQ(table.Find(0x1000)->a, 7);
  ASSERT_TRUE(table.Insert(0x1000, {9, 3}));  // a reused handle replaces
  Value out;
  ASSERT_TRUE(table.Take(0x1000, &out));
  EXPECT_EQ(out.a, 9);
  EXPECT_FALSE(table.Take(0x1000, &out));
  EXPECT_EQ(table.Find(0x2000)->b, 2);
}

TEST(HandleTableTest, AFullWindowRefusesAndFreedSlotsAreReused) {
  static HandleTable<Value, 4, 4> table;  // one window: the whole table
  for (uint64_t k = 1; k <= 4; ++k)
    ASSERT_TRUE(table.Insert(k, {int64_t(k), 0}));
  EXPECT_FALSE(table.Insert(5, {5, 0}));
  ASSERT_TRUE(table.Take(2, nullptr));
  ASSERT_TRUE(table.Insert(5, {5, 0}));
  EXPECT_EQ(table.Find(5)->a, 5);
  EXPECT_EQ(table.Find(4)->a, 4);
}

TEST(HandleTableTest, ThreadsWithDistinctKeysDoNotInterfere) {
  static HandleTable<Value, 4096> table;
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &errors] {
      for (int i = 0; i < 100000; ++i) {
        const uint64_t key = (uint64_t(t) << 32) | (i % 64 + 1);
        if (!table.Insert(key, {i, t})) ++errors;
        Value out;
        if (!table.Take(key, &out) || out.a != i || out.b != t) ++errors;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(errors.load(), 0);
}

}  // namespace
}  // namespace meridian
