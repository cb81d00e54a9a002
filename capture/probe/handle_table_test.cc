#include "capture/probe/handle_table.h"

#include <atomic>
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

// A thread completing request 0x1000 marked it; MPI then handed the same
// handle to another thread's next call, which inserts before the first
// thread takes its entry: each thread gets its own value.
TEST(HandleTableTest, AMarkedEntryIsNotReplacedByTheHandlesNextUse) {
  static HandleTable<Value, 64> table;
  ASSERT_TRUE(table.Insert(0x1000, {1, 0}));
  EXPECT_EQ(table.Mark(0x2000), 0u);
  const uint32_t first = table.Mark(0x1000);
  ASSERT_NE(first, 0u);
  EXPECT_EQ(table.Find(0x1000), nullptr);  // marked: not the handle's now
  ASSERT_TRUE(table.Insert(0x1000, {2, 0}));
  // The marking thread still reads its own entry (MPI_Wait publishing it).
  ASSERT_NE(table.PeekMarked(first), nullptr);
  EXPECT_EQ(table.PeekMarked(first)->a, 1);
  EXPECT_EQ(table.PeekMarked(0), nullptr);
  EXPECT_EQ(table.PeekMarked(65), nullptr);
  // The handle's next use is completed too before the first is taken:
  // two marked entries of one key, told apart by their tickets.
  const uint32_t second = table.Mark(0x1000);
  ASSERT_NE(second, 0u);
  ASSERT_NE(second, first);
  Value out;
  ASSERT_TRUE(table.TakeMarked(second, &out));
  EXPECT_EQ(out.a, 2);
  ASSERT_TRUE(table.TakeMarked(first, &out));
  EXPECT_EQ(out.a, 1);
  EXPECT_EQ(table.PeekMarked(first), nullptr);  // taken
  EXPECT_FALSE(table.TakeMarked(first, &out));
  EXPECT_FALSE(table.TakeMarked(0, &out));
  EXPECT_FALSE(table.TakeMarked(65, &out));
  // A request that did not complete is unmarked and found again.
  ASSERT_TRUE(table.Insert(0x3000, {3, 0}));
  const uint32_t third = table.Mark(0x3000);
  ASSERT_NE(third, 0u);
  table.Unmark(third);
  table.Unmark(third);  // no effect: not marked
  ASSERT_NE(table.Find(0x3000), nullptr);
  EXPECT_EQ(table.Find(0x3000)->a, 3);
  EXPECT_FALSE(table.Insert(0, {0, 0}));
  EXPECT_FALSE(table.Insert(1ULL << 63, {0, 0}));
}

// Two threads share a pool of 8 handles, as MPI reuses request handles:
// each issues on a free handle, marks, frees the handle (MPI completing it)
// and only then takes its entry, while the other thread may already issue
// on that handle. Every thread takes back exactly the value it inserted.
TEST(HandleTableTest, HandlesReusedBetweenCompletionAndTakeKeepTheirValues) {
  static HandleTable<Value, 64, 16> table;
  std::atomic<uint32_t> free_handles{0xff};  // bit h: handle h + 1 free
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([t, &free_handles, &errors] {  // table: static
      for (int i = 0; i < 200000; ++i) {
        uint32_t bits = free_handles.load();
        int h = 0;
        do {
          if (bits == 0) {
            bits = free_handles.load();
            continue;
          }
          h = __builtin_ctz(bits);
        } while (bits == 0 ||
                 !free_handles.compare_exchange_weak(bits, bits & ~(1u << h)));
        const uint64_t key = h + 1;
        uint32_t ticket = 0;
        if (!table.Insert(key, {i, t}) || (ticket = table.Mark(key)) == 0) {
          ++errors;
        }
        free_handles.fetch_or(1u << h);  // completed: the handle is MPI's
        Value out;
        if (!table.TakeMarked(ticket, &out) || out.a != i || out.b != t) {
          ++errors;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(errors.load(), 0);
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
