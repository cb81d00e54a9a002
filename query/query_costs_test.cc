#include "query/query_costs.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

JobCatalog Job(int64_t spans, int tracks) {
  JobCatalog catalog;
  catalog.job.spans = spans;
  catalog.tracks.resize(static_cast<size_t>(tracks));
  return catalog;
}

TEST(QueryCostsTest, AScanHoldsAtMostOneDecodedChunkPerTrack) {
  EXPECT_EQ(ScanBytes(Job(280384, 64)), 280384u * 80);
  // 2 tracks of 65,536-span chunks: 131,072 spans decoded at most.
  EXPECT_EQ(ScanBytes(Job(10000000, 2)), 131072u * 80);
  EXPECT_EQ(ScanBytes(Job(0, 0)), 0u);
  EXPECT_EQ(SolveBytes(Job(1000, 4)), 1000u * 80 + 1000u * 64);
}

TEST(QueryCostsTest, WholeBlocksAndStepsScaleWithWhatTheyLoad) {
  EXPECT_EQ(WholeBytes(Job(1000, 4), kAnalysisBytesPerSpan), 190000u);
  EXPECT_EQ(WholeBytes(Job(1000, 4), kReplayBytesPerSpan), 380000u);
  // A block of 88,300 spans, and the scan of the whole job beside it.
  EXPECT_EQ(BlockBytes(Job(280384, 64), 88300, 190),
            88300u * 190 + 280384u * 80);
  // A job smaller than a block holds the job.
  EXPECT_EQ(BlockBytes(Job(1000, 4), 200000, 190), 1000u * 190 + 1000u * 80);
  // 1,000 steps of 1,000 spans: two steps read hold 4,000 spans' worth,
  // lifted to the least a read of steps reserves.
  EXPECT_EQ(StepsBytes(Job(1000000, 4), 2, 1000, 190), 65536u * 190);
  // 10 steps of 100,000: one step, twice its share.
  EXPECT_EQ(StepsBytes(Job(1000000, 4), 1, 10, 190), 200000u * 190);
  // Never more than the job.
  EXPECT_EQ(StepsBytes(Job(1000, 4), 1, 1, 190), 1000u * 190);
  EXPECT_EQ(StepsBytes(Job(1000000, 4), 3, 0, 190), 1000000u * 190);
  // A range far wider than the job is the job, without overflow.
  EXPECT_EQ(StepsBytes(Job(1000000, 4), INT64_MAX, 10, 190), 1000000u * 190);
}

}  // namespace
}  // namespace meridian
