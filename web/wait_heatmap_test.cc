#include "web/wait_heatmap.h"

#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

v1::CollectiveInstance Instance(int64_t step, int32_t last, int64_t wait) {
  v1::CollectiveInstance c;
  c.set_step(step);
  c.set_last_rank(last);
  c.set_wait_ns(wait);
  return c;
}

// Ranks 0-4, steps 10-14: binned 2 x 2 into ranks {0-2, 3-4} and steps
// {10-12, 13-14}.
TEST(WaitHeatmapTest, BinsRanksAndStepsAndFindsTheHottestCell) {
  v1::StragglersReply reply;
  for (int r = 0; r < 5; ++r) reply.add_ranks()->set_rank(r);
  *reply.add_collectives() = Instance(10, 1, 100);
  *reply.add_collectives() = Instance(10, 1, 50);  // same cell: 150
  *reply.add_collectives() = Instance(12, 2, 120);
  *reply.add_collectives() = Instance(14, 4, 70);
  *reply.add_collectives() = Instance(13, -1, 0);  // nobody late
  v1::CollectiveInstance no_step = Instance(0, 3, 999);
  no_step.clear_step();
  *reply.add_collectives() = no_step;
  const WaitHeatmap map = MakeWaitHeatmap(reply, 2, 2);
  EXPECT_EQ(map.rank_starts, (std::vector<int32_t>{0, 3}));
  EXPECT_EQ(map.step_starts, (std::vector<int64_t>{10, 13}));
  EXPECT_EQ(map.last_rank, 4);
  EXPECT_EQ(map.last_step, 14);
  EXPECT_EQ(map.wait_ns, (std::vector<int64_t>{270, 0, 0, 70}));
  EXPECT_EQ(map.hottest_rank, 1);
  EXPECT_EQ(map.hottest_step, 10);

  const WaitHeatmap none = MakeWaitHeatmap(v1::StragglersReply(), 64, 200);
  EXPECT_TRUE(none.wait_ns.empty());
  EXPECT_EQ(none.hottest_rank, -1);
  // Nobody late: every cell 0, the bins still drawn.
  v1::StragglersReply even;
  for (int r = 0; r < 2; ++r) even.add_ranks()->set_rank(r);
  *even.add_collectives() = Instance(4, -1, 0);
  const WaitHeatmap zero = MakeWaitHeatmap(even, 64, 200);
  EXPECT_EQ(zero.rank_starts, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(zero.step_starts, (std::vector<int64_t>{4}));
  EXPECT_EQ(zero.wait_ns, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(zero.hottest_rank, -1);
}

}  // namespace
}  // namespace meridian
