#include "query/analysis/step_blocks.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

// The header's example.
TEST(StepBlocksTest, HalvedOverTheBudgetAndDoubledBack) {
  StepBlocks blocks(100000, 100, 10000);
  EXPECT_EQ(blocks.per_step(), 1000);
  EXPECT_EQ(blocks.steps(), 10);
  EXPECT_EQ(StepBlocks(100000, 100, 10000, 1).steps(), 9);
  EXPECT_TRUE(blocks.Halve(10));
  EXPECT_EQ(blocks.steps(), 5);
  EXPECT_TRUE(blocks.Halve(3));  // a short block at the end: halved as read
  EXPECT_EQ(blocks.steps(), 1);
  EXPECT_FALSE(blocks.Halve(1));
  blocks.Fitted();
  EXPECT_EQ(blocks.steps(), 2);
  for (int i = 0; i < 5; ++i) blocks.Fitted();
  EXPECT_EQ(blocks.steps(), 10);  // no more than the mean step's
}

// Steps larger than a block, a job without spans: one step a block.
TEST(StepBlocksTest, AtLeastOneStep) {
  EXPECT_EQ(StepBlocks(1000000, 2, 10000).steps(), 1);
  EXPECT_EQ(StepBlocks(1000000, 2, 10000, 1).steps(), 1);
  const StepBlocks empty(0, 0, 10000);
  EXPECT_EQ(empty.per_step(), 1);
  EXPECT_EQ(empty.steps(), 10000);
}

}  // namespace
}  // namespace meridian
