#include "query/analysis/stats.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(StatsTest, SizeBucketsArePowersOfTwo) {
  EXPECT_EQ(SizeBucketOf(0), -1);
  EXPECT_EQ(SizeBucketOf(1), 0);
  EXPECT_EQ(SizeBucketOf(7), 2);
  EXPECT_EQ(SizeBucketOf(8), 3);
  EXPECT_EQ(SizeBucketOf(int64_t{1} << 40), 40);
}

// Three ranks; rank 2 has no communication at all.
TEST(StatsTest, SumsOperationsBucketsAndRanks) {
  JobCatalog catalog;
  catalog.job.name = "j";
  catalog.processes = {{1, "a", 0, 0, 1}, {2, "a", 1, 1, 2}, {3, "b", 2, 0, 3}};
  catalog.tracks = {{10, 1, v1::TRACK_KIND_THREAD, 1, ""},
                    {11, 2, v1::TRACK_KIND_THREAD, 1, ""},
                    {12, 3, v1::TRACK_KIND_THREAD, 1, ""}};
  catalog.ops = {{1, v1::CATEGORY_MPI, "MPI_Allreduce"},
                 {2, v1::CATEGORY_NCCL, "AllGather"},
                 {3, v1::CATEGORY_USER, "forward"}};
  auto selection = SpanSelection::Make(catalog, v1::SpanFilter());
  ASSERT_TRUE(selection.ok());
  StatsBuilder stats(catalog, *selection);
  auto add = [&](int64_t track, int64_t op, int64_t start, int64_t dur,
                 int64_t bytes) {
    StoredSpan span;
    span.track_id = track;
    span.op_id = op;
    span.start_ns = start;
    span.dur_ns = dur;
    span.bytes = bytes;
    stats.Add(span);
  };
  add(10, 1, 100, 10, 8);
  add(10, 1, 200, 30, 12);
  add(10, 1, 300, 50, 4096);
  add(11, 1, 100, 40, 8);
  add(11, 2, 150, 60, 0);
  add(12, 3, 50, 500, 0);
  v1::StatsReply reply = stats.Finish();
  EXPECT_EQ(reply.job(), "j");
  EXPECT_EQ(reply.elapsed_ns(), 500);  // 50 .. 550
  ASSERT_EQ(reply.ops_size(), 2);
  const v1::OpStats& allreduce = reply.ops(0);  // 130 ns > 60 ns
  EXPECT_EQ(allreduce.name(), "MPI_Allreduce");
  EXPECT_EQ(allreduce.calls(), 4);
  EXPECT_EQ(allreduce.bytes(), 8 + 12 + 4096 + 8);
  EXPECT_EQ(allreduce.dur_ns(), 130);
  ASSERT_EQ(allreduce.buckets_size(), 2);
  EXPECT_EQ(allreduce.buckets(0).log2(), 3);
  EXPECT_EQ(allreduce.buckets(0).calls(), 3);
  EXPECT_EQ(allreduce.buckets(0).bytes(), 28);
  EXPECT_EQ(allreduce.buckets(0).dur_ns(), 80);
  EXPECT_EQ(allreduce.buckets(1).log2(), 12);
  EXPECT_EQ(reply.ops(1).buckets(0).log2(), -1);
  ASSERT_EQ(reply.ranks_size(), 3);
  EXPECT_EQ(reply.ranks(0).comm_ns(), 90);
  EXPECT_EQ(reply.ranks(0).elapsed_ns(), 250);
  EXPECT_EQ(reply.ranks(1).comm_ns(), 100);
  EXPECT_EQ(reply.ranks(1).calls(), 2);
  EXPECT_EQ(reply.ranks(2).comm_ns(), 0);
  EXPECT_EQ(reply.ranks(2).host(), "b");
  EXPECT_EQ(reply.min_comm_rank(), 2);
  EXPECT_EQ(reply.median_comm_rank(), 0);
  EXPECT_EQ(reply.max_comm_rank(), 1);
}

TEST(StatsTest, ListsSelectedRanksOnly) {
  JobCatalog catalog;
  catalog.processes = {{1, "a", 0, 0, 1}, {2, "a", 1, 1, 2}};
  catalog.tracks = {{10, 1, v1::TRACK_KIND_THREAD, 1, ""}};
  v1::SpanFilter filter;
  filter.add_ranks(1);
  auto selection = SpanSelection::Make(catalog, filter);
  ASSERT_TRUE(selection.ok());
  v1::StatsReply reply = StatsBuilder(catalog, *selection).Finish();
  ASSERT_EQ(reply.ranks_size(), 1);
  EXPECT_EQ(reply.ranks(0).rank(), 1);
  EXPECT_EQ(reply.elapsed_ns(), 0);
}

// Rank 0 captured, rank 1 imported from a profile (no spans), rank 2
// imported but not selected.
TEST(StatsTest, AddsImportedTotalsOfSelectedRanksBesideSpans) {
  JobCatalog catalog;
  catalog.job.name = "j";
  catalog.processes = {
      {1, "a", 0, 0, 1}, {2, "b", 1, -1, 0}, {3, "c", 2, -1, 0}};
  catalog.tracks = {{10, 1, v1::TRACK_KIND_THREAD, 1, ""}};
  catalog.ops = {{1, v1::CATEGORY_MPI, "MPI_Allreduce"},
                 {2, v1::CATEGORY_MPI, "MPI_Send"}};
  v1::SpanFilter filter;
  filter.add_ranks(0);
  filter.add_ranks(1);
  auto selection = SpanSelection::Make(catalog, filter);
  ASSERT_TRUE(selection.ok());
  StatsBuilder stats(catalog, *selection);
  StoredSpan span;
  span.track_id = 10;
  span.op_id = 1;
  span.start_ns = 1000;
  span.dur_ns = 300;
  span.bytes = 8;
  stats.Add(span);
  JobTotals totals;
  totals.ops.push_back(
      {2, 1, 4, 64, 2000, {{3, 2, 16, 500}, {4, 2, 48, 1500}}});
  totals.ops.push_back({2, 2, 1, 0, 100, {{-1, 1, 0, 100}}});
  totals.ops.push_back({3, 1, 99, 99, 99, {}});
  totals.processes.push_back({2, 2100, 50000, "mpitrace"});
  totals.processes.push_back({3, 99, 99999, "mpitrace"});
  stats.AddTotals(totals);
  v1::StatsReply reply = stats.Finish();
  EXPECT_EQ(reply.elapsed_ns(), 50000);
  ASSERT_EQ(reply.ops_size(), 2);
  const v1::OpStats& allreduce = reply.ops(0);
  EXPECT_EQ(allreduce.name(), "MPI_Allreduce");
  EXPECT_EQ(allreduce.calls(), 5);
  EXPECT_EQ(allreduce.bytes(), 72);
  EXPECT_EQ(allreduce.dur_ns(), 2300);
  ASSERT_EQ(allreduce.buckets_size(), 2);
  EXPECT_EQ(allreduce.buckets(0).log2(), 3);
  EXPECT_EQ(allreduce.buckets(0).calls(), 3);
  EXPECT_EQ(allreduce.buckets(0).bytes(), 24);
  EXPECT_EQ(allreduce.buckets(0).dur_ns(), 800);
  EXPECT_EQ(allreduce.buckets(1).log2(), 4);
  EXPECT_EQ(reply.ops(1).name(), "MPI_Send");
  EXPECT_EQ(reply.ops(1).buckets(0).log2(), -1);
  ASSERT_EQ(reply.ranks_size(), 2);
  EXPECT_EQ(reply.ranks(0).source(), "");
  EXPECT_EQ(reply.ranks(0).comm_ns(), 300);
  EXPECT_EQ(reply.ranks(1).rank(), 1);
  EXPECT_EQ(reply.ranks(1).source(), "mpitrace");
  EXPECT_EQ(reply.ranks(1).calls(), 5);
  EXPECT_EQ(reply.ranks(1).comm_ns(), 2100);
  EXPECT_EQ(reply.ranks(1).elapsed_ns(), 50000);
  EXPECT_EQ(reply.max_comm_rank(), 1);
}

// With a name filter, a rank's imported communication time is its
// selected operations' time, not the profile's total.
TEST(StatsTest, ImportedTimeFollowsAnOperationFilter) {
  JobCatalog catalog;
  catalog.processes = {{2, "b", 1, -1, 0}};
  catalog.ops = {{1, v1::CATEGORY_MPI, "MPI_Allreduce"},
                 {2, v1::CATEGORY_MPI, "MPI_Send"}};
  v1::SpanFilter filter;
  filter.set_name_glob("MPI_Send");
  auto selection = SpanSelection::Make(catalog, filter);
  ASSERT_TRUE(selection.ok());
  StatsBuilder stats(catalog, *selection);
  JobTotals totals;
  totals.ops.push_back({2, 1, 4, 64, 2000, {}});
  totals.ops.push_back({2, 2, 1, 0, 100, {}});
  totals.processes.push_back({2, 2100, 50000, "mpitrace"});
  stats.AddTotals(totals);
  v1::StatsReply reply = stats.Finish();
  ASSERT_EQ(reply.ops_size(), 1);
  EXPECT_EQ(reply.ops(0).name(), "MPI_Send");
  ASSERT_EQ(reply.ranks_size(), 1);
  EXPECT_EQ(reply.ranks(0).comm_ns(), 100);
  EXPECT_EQ(reply.ranks(0).calls(), 1);
}

}  // namespace
}  // namespace meridian
