#include "query/clocks/settled_groups.h"

#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

// The header's example: an Allreduce of nodes 0 (entered at 100 and 300)
// and 1 (450), left at 500 and 520.
TEST(SettledGroupsTest, TheHeadersAllreduce) {
  SettledGroups settled;
  const std::vector<SettledGroups::Start> starts{{0, 100}, {1, 450}, {0, 300}};
  const std::vector<SettledGroups::End> ends{{0, 500, 7}, {1, 520, 8}};
  settled.AddGroup(starts, ends);
  settled.Bound(1, 0, 500 - 450);
  settled.Bound(0, 1, 520 - 300);
  settled.Bound(1, 0, 80);  // looser: the tightest is kept
  EXPECT_EQ(settled.groups(), 1);
  EXPECT_EQ(settled.constraints(), 2);
  EXPECT_EQ(settled.violations_before(), 0);
  EXPECT_EQ(settled.bounds().at({1, 0}), 50);
  EXPECT_EQ(settled.bounds().at({0, 1}), 220);
  absl::flat_hash_map<uint64_t, int64_t> shifts;
  const std::vector<int64_t> none{0, 0};
  EXPECT_EQ(settled.CountViolations(none, &shifts), 0);
  EXPECT_TRUE(shifts.empty());
  // Node 1 later by 100: its start is at 550; node 0's end (500) is before
  // it by 50, node 1's own (620) is not.
  const std::vector<int64_t> x{0, 100};
  EXPECT_EQ(settled.CountViolations(x, &shifts), 1);
  EXPECT_EQ(shifts, (absl::flat_hash_map<uint64_t, int64_t>{{7, 50}}));
  // A shift already larger stays; nodes beyond x count as 0.
  shifts[7] = 60;
  EXPECT_EQ(settled.CountViolations(x, &shifts), 1);
  EXPECT_EQ(shifts.at(7), 60);
  EXPECT_EQ(settled.CountViolations({}, &shifts), 0);
}

TEST(SettledGroupsTest, ViolationsBeforeAndEmptyGroups) {
  SettledGroups settled;
  // A message: sent at 1000 on node 2, received by 900 on node 3.
  const std::vector<SettledGroups::Start> send{{2, 1000}};
  const std::vector<SettledGroups::End> recv{{3, 900, 11}};
  settled.AddGroup(send, recv);
  settled.AddGroup({}, recv);  // ignored
  settled.AddGroup(send, {});  // ignored
  EXPECT_EQ(settled.groups(), 1);
  EXPECT_EQ(settled.constraints(), 1);
  EXPECT_EQ(settled.violations_before(), 1);
  absl::flat_hash_map<uint64_t, int64_t> shifts;
  const std::vector<int64_t> x{0, 0, 0, 100};
  EXPECT_EQ(settled.CountViolations(x, &shifts), 0);
  const std::vector<int64_t> less{0, 0, 0, 40};
  EXPECT_EQ(settled.CountViolations(less, &shifts), 1);
  EXPECT_EQ(shifts.at(11), 60);
  settled.Close(5, 9);
  EXPECT_TRUE(settled.Closed(5, 9));
  EXPECT_FALSE(settled.Closed(5, 10));
  EXPECT_GT(settled.MemoryBytes(), 0);
}

}  // namespace
}  // namespace meridian
