#include "query/analysis/stats.h"

#include <string>
#include <vector>

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

// mpitrace's bins: 0; 1 to 4; then (2^k, 2^(k+1)], exact powers of two
// closing their bin (the seed profile's 128-byte Bcasts apart from its
// 211-byte ones).
TEST(StatsTest, MpitraceBinsCloseAtPowersOfTwo) {
  EXPECT_EQ(MpitraceSizeBucketOf(0), -1);
  EXPECT_EQ(MpitraceSizeBucketOf(1), 1);
  EXPECT_EQ(MpitraceSizeBucketOf(4), 1);
  EXPECT_EQ(MpitraceSizeBucketOf(5), 2);
  EXPECT_EQ(MpitraceSizeBucketOf(8), 2);
  EXPECT_EQ(MpitraceSizeBucketOf(9), 3);
  EXPECT_EQ(MpitraceSizeBucketOf(128), 6);
  EXPECT_EQ(MpitraceSizeBucketOf(129), 7);
  EXPECT_EQ(MpitraceSizeBucketOf(211), 7);
  EXPECT_EQ(MpitraceSizeBucketOf(256), 7);
  EXPECT_EQ(MpitraceSizeBucketOf(int64_t{1} << 40), 39);
  EXPECT_EQ(MpitraceSizeBucketOf(INT64_MAX), 62);
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
  totals.processes.push_back({{2100, 50000, "mpitrace"}, 2});
  totals.processes.push_back({{99, 99999, "mpitrace"}, 3});
  stats.AddTotals(totals);
  v1::StatsReply reply = stats.Finish();
  // Elapsed is the spans' first start to last end; an imported profile's
  // (MPI_Init to MPI_Finalize) is its rank's mpi_elapsed_ns.
  EXPECT_EQ(reply.elapsed_ns(), 300);
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
  EXPECT_EQ(reply.ranks(1).elapsed_ns(), 0);
  EXPECT_EQ(reply.ranks(1).mpi_elapsed_ns(), 50000);
  EXPECT_EQ(reply.ranks(0).mpi_elapsed_ns(), 0);
  EXPECT_EQ(reply.max_comm_rank(), 1);
}

// One rank's profile imported twice, on two nodes (alone, then with its
// run): its routines are counted once, from the latest import.
TEST(StatsTest, ARanksProfileImportedTwiceIsCountedOnce) {
  JobCatalog catalog;
  catalog.job.name = "j";
  catalog.processes = {{2, "mpi_profile.1", 1, -1, 0}, {5, "nid7", 1, -1, 0}};
  catalog.ops = {{1, v1::CATEGORY_MPI, "MPI_Allreduce"}};
  auto selection = SpanSelection::Make(catalog, v1::SpanFilter());
  ASSERT_TRUE(selection.ok());
  StatsBuilder stats(catalog, *selection);
  JobTotals totals;
  totals.ops.push_back({2, 1, 4, 64, 2000, {}});
  totals.ops.push_back({5, 1, 4, 64, 2000, {}});
  totals.processes.push_back({{2100, 50000, "mpitrace"}, 2});
  totals.processes.push_back({{2100, 50000, "mpitrace"}, 5});
  stats.AddTotals(totals);
  const v1::StatsReply reply = stats.Finish();
  ASSERT_EQ(reply.ops_size(), 1);
  EXPECT_EQ(reply.ops(0).calls(), 4);
  EXPECT_EQ(reply.ops(0).dur_ns(), 2000);
  ASSERT_EQ(reply.ranks_size(), 1);
  EXPECT_EQ(reply.ranks(0).calls(), 4);
  EXPECT_EQ(reply.ranks(0).comm_ns(), 2100);
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
  totals.processes.push_back({{2100, 50000, "mpitrace"}, 2});
  stats.AddTotals(totals);
  v1::StatsReply reply = stats.Finish();
  ASSERT_EQ(reply.ops_size(), 1);
  EXPECT_EQ(reply.ops(0).name(), "MPI_Send");
  ASSERT_EQ(reply.ranks_size(), 1);
  EXPECT_EQ(reply.ranks(0).comm_ns(), 100);
  EXPECT_EQ(reply.ranks(0).calls(), 1);
}

StoredSpan Span(int64_t track, int64_t op, int64_t start, int64_t dur,
                int64_t bytes = 0) {
  StoredSpan span;
  span.track_id = track;
  span.op_id = op;
  span.start_ns = start;
  span.dur_ns = dur;
  span.bytes = bytes;
  return span;
}

StoredSpan Counter(int64_t track, int64_t op, int64_t at, double value) {
  StoredSpan span = Span(track, op, at, 0);
  span.kind = v1::SPAN_KIND_COUNTER;
  span.value = value;
  return span;
}

StoredArg IntArg(const std::string& key, int64_t value) {
  StoredArg arg;
  arg.key = key;
  arg.type = StoredArg::Type::kInt;
  arg.int_value = value;
  return arg;
}

// What GetStats does with each scanned span.
void Feed(StatsBuilder& stats, const SpanSelection& selection,
          const std::vector<StoredSpan>& spans) {
  for (const StoredSpan& span : spans) {
    if (selection.Selects(span)) {
      stats.Add(span);
    } else {
      stats.AddUnselected(span);
    }
  }
}

// A non-blocking call counts its "call_ns" (the issuing call's time), not
// issue to completion; counters and instants are no calls.
TEST(StatsTest, CountsTimeInsideTheCall) {
  JobCatalog catalog;
  catalog.processes = {{1, "a", 0, 0, 1}};
  catalog.tracks = {{10, 1, v1::TRACK_KIND_THREAD, 1, ""}};
  catalog.ops = {{1, v1::CATEGORY_MPI, "MPI_Isend"},
                 {2, v1::CATEGORY_MPI, "MPI_Wait"},
                 {3, v1::CATEGORY_MPI, "MPI_Counter"},
                 {4, v1::CATEGORY_NCCL, "AllReduce"}};
  auto selection = SpanSelection::Make(catalog, v1::SpanFilter());
  ASSERT_TRUE(selection.ok());
  StatsBuilder stats(catalog, *selection);
  StoredSpan isend = Span(10, 1, 100, 1000, 64);
  isend.args = {IntArg("other", 7), IntArg("call_ns", 40)};
  stats.Add(isend);
  StoredSpan odd = Span(10, 1, 2000, 100, 64);  // call_ns over dur_ns
  odd.args = {IntArg("call_ns", 500)};
  stats.Add(odd);
  StoredSpan real_arg = Span(10, 1, 3000, 100, 64);  // not an int: ignored
  real_arg.args = {IntArg("call_ns", 0)};
  real_arg.args[0].type = StoredArg::Type::kReal;
  real_arg.args[0].real_value = 3;
  stats.Add(real_arg);
  stats.Add(Span(10, 2, 1050, 900));
  stats.Add(Counter(10, 3, 1200, 5));
  StoredSpan instant = Span(10, 4, 1300, 0);
  instant.kind = v1::SPAN_KIND_INSTANT;
  stats.Add(instant);
  v1::StatsReply reply = stats.Finish();
  ASSERT_EQ(reply.ops_size(), 2);
  EXPECT_EQ(reply.ops(0).name(), "MPI_Wait");
  EXPECT_EQ(reply.ops(0).dur_ns(), 900);
  EXPECT_EQ(reply.ops(1).name(), "MPI_Isend");
  EXPECT_EQ(reply.ops(1).calls(), 3);
  EXPECT_EQ(reply.ops(1).dur_ns(), 40 + 100 + 100);
  ASSERT_EQ(reply.ops(1).buckets_size(), 1);
  EXPECT_EQ(reply.ops(1).buckets(0).log2(), 6);
  EXPECT_EQ(reply.ops(1).buckets(0).dur_ns(), 240);
  ASSERT_EQ(reply.ranks_size(), 1);
  EXPECT_EQ(reply.ranks(0).calls(), 4);
  EXPECT_EQ(reply.ranks(0).comm_ns(), 240 + 900);
  EXPECT_EQ(reply.ranks(0).elapsed_ns(), 3000);  // 100 .. 3100
  EXPECT_EQ(reply.ranks(0).ops_size(), 0);       // not per_rank
}

// rusage counters (the earliest sample) and MPI_Init..MPI_Finalize are
// taken even when --name leaves them out; not for an unselected rank.
TEST(StatsTest, TakesProcessFiguresWhateverTheNameFilter) {
  JobCatalog catalog;
  catalog.processes = {{1, "a", 0, 0, 1}, {2, "a", 1, 1, 2}, {3, "b", 2, 0, 3}};
  catalog.tracks = {{10, 1, v1::TRACK_KIND_THREAD, 1, ""},
                    {11, 2, v1::TRACK_KIND_THREAD, 1, ""},
                    {12, 3, v1::TRACK_KIND_THREAD, 1, ""}};
  catalog.ops = {{1, v1::CATEGORY_MPI, "MPI_Allreduce"},
                 {2, v1::CATEGORY_MPI, "MPI_Init"},
                 {3, v1::CATEGORY_MPI, "MPI_Init_thread"},
                 {4, v1::CATEGORY_MPI, "MPI_Finalize"},
                 {5, v1::CATEGORY_MPI, "rusage.user_ns"},
                 {6, v1::CATEGORY_MPI, "rusage.system_ns"},
                 {7, v1::CATEGORY_MPI, "rusage.max_rss_bytes"},
                 {8, v1::CATEGORY_MPI, "rusage.context_switches"},
                 {9, v1::CATEGORY_USER, "rusage.user_ns"},
                 {10, v1::CATEGORY_MPI, "MPI_Pcontrol"}};
  v1::SpanFilter filter;
  filter.add_ranks(0);
  filter.add_ranks(1);
  filter.set_name_glob("MPI_Allreduce");
  auto selection = SpanSelection::Make(catalog, filter);
  ASSERT_TRUE(selection.ok());
  StatsBuilder stats(catalog, *selection);
  Feed(stats, *selection,
       {
           Span(10, 2, 1000, 500),  // MPI_Init: ends at 1500
           Span(10, 1, 2000, 100, 8),
           Span(10, 4, 9000, 700),            // MPI_Finalize
           Counter(10, 5, 9600, 3000000000),  // at Finalize
           Counter(10, 6, 9600, 200000000),
           Counter(10, 7, 9600, 1177191000),
           Counter(10, 8, 9600, 634913),
           Counter(10, 5, 9900, 3500000000),  // at exit: later, ignored
           Counter(10, 7, 9900, 2000000000),
           Counter(10, 9, 9500, 1),  // a USER counter of the same name
           Span(11, 3, 500, 100),    // MPI_Init_thread: ends at 600
           Span(11, 1, 2000, 300, 8),
           Counter(11, 5, 8000, 42),  // no MPI_Finalize: at exit only
           Span(11, 10, 2500, 0),     // rank 1 called MPI_Pcontrol
           Span(12, 2, 0, 10),        // rank 2 is not selected
           Span(12, 4, 9000, 10),
           Counter(12, 5, 9000, 1),
       });
  v1::StatsReply reply = stats.Finish();
  ASSERT_EQ(reply.ops_size(), 1);
  EXPECT_EQ(reply.ops(0).name(), "MPI_Allreduce");
  EXPECT_EQ(reply.ops(0).calls(), 2);
  ASSERT_EQ(reply.ranks_size(), 2);
  const v1::RankStats& r0 = reply.ranks(0);
  EXPECT_EQ(r0.calls(), 1);
  EXPECT_EQ(r0.comm_ns(), 100);
  EXPECT_EQ(r0.elapsed_ns(), 100);  // the selected spans only
  EXPECT_EQ(r0.user_ns(), 3000000000);
  EXPECT_EQ(r0.system_ns(), 200000000);
  EXPECT_EQ(r0.max_rss_bytes(), 1177191000);
  EXPECT_EQ(r0.context_switches(), 634913);
  EXPECT_EQ(r0.mpi_elapsed_ns(), 9000 - 1500);
  const v1::RankStats& r1 = reply.ranks(1);
  EXPECT_EQ(r1.user_ns(), 42);
  EXPECT_EQ(r1.system_ns(), 0);
  EXPECT_EQ(r1.max_rss_bytes(), 0);
  EXPECT_EQ(r1.context_switches(), 0);
  EXPECT_EQ(r1.mpi_elapsed_ns(), 0);  // no MPI_Finalize
  EXPECT_FALSE(r0.pcontrol_windows());
  EXPECT_TRUE(r1.pcontrol_windows());
}

// Without a filter the same spans are selected: MPI_Init, MPI_Finalize and
// the counters are no calls (mpitrace counts neither); figures as with a
// filter.
TEST(StatsTest, ProcessFiguresOfSelectedSpans) {
  JobCatalog catalog;
  catalog.processes = {{1, "a", 0, 0, 1}};
  catalog.tracks = {{10, 1, v1::TRACK_KIND_THREAD, 1, ""}};
  catalog.ops = {{2, v1::CATEGORY_MPI, "MPI_Init"},
                 {4, v1::CATEGORY_MPI, "MPI_Finalize"},
                 {5, v1::CATEGORY_MPI, "rusage.user_ns"}};
  auto selection = SpanSelection::Make(catalog, v1::SpanFilter());
  ASSERT_TRUE(selection.ok());
  StatsBuilder stats(catalog, *selection);
  Feed(stats, *selection,
       {Span(10, 2, 1000, 500), Span(10, 4, 9000, 700), Counter(10, 5, 9900, 7),
        Counter(10, 5, 9600, 5)});
  v1::StatsReply reply = stats.Finish();
  ASSERT_EQ(reply.ranks_size(), 1);
  EXPECT_EQ(reply.ranks(0).calls(), 0);
  EXPECT_EQ(reply.ranks(0).comm_ns(), 0);
  EXPECT_EQ(reply.ranks(0).user_ns(), 5);  // the earliest sample
  EXPECT_EQ(reply.ranks(0).mpi_elapsed_ns(), 7500);
  EXPECT_EQ(reply.ops_size(), 0);
}

// per_rank: each rank's operations as StatsReply.ops gives the job's, with
// imported totals in their rank's.
TEST(StatsTest, PerRankOperations) {
  JobCatalog catalog;
  catalog.processes = {
      {1, "a", 0, 0, 1}, {2, "a", 1, 1, 2}, {3, "b", 2, -1, 0}};
  catalog.tracks = {{10, 1, v1::TRACK_KIND_THREAD, 1, ""},
                    {11, 2, v1::TRACK_KIND_THREAD, 1, ""}};
  catalog.ops = {{1, v1::CATEGORY_MPI, "MPI_Allreduce"},
                 {2, v1::CATEGORY_MPI, "MPI_Send"},
                 {3, v1::CATEGORY_USER, "forward"}};
  auto selection = SpanSelection::Make(catalog, v1::SpanFilter());
  ASSERT_TRUE(selection.ok());
  StatsOptions options;
  options.per_rank = true;
  StatsBuilder stats(catalog, *selection, options);
  Feed(stats, *selection,
       {Span(10, 1, 100, 10, 8), Span(10, 1, 200, 30, 0),
        Span(10, 2, 300, 50, 4096), Span(10, 3, 400, 1000),
        Span(11, 1, 100, 40, 8)});
  JobTotals totals;
  totals.ops.push_back({3, 2, 2, 64, 500, {{5, 2, 64, 500}}});
  totals.processes.push_back({{500, 9000, "mpitrace"}, 3});
  stats.AddTotals(totals);
  v1::StatsReply reply = stats.Finish();
  ASSERT_EQ(reply.ops_size(), 2);
  EXPECT_EQ(reply.ops(0).name(), "MPI_Send");  // 550 ns
  EXPECT_EQ(reply.ops(0).calls(), 3);
  ASSERT_EQ(reply.ranks_size(), 3);

  const v1::RankStats& r0 = reply.ranks(0);
  ASSERT_EQ(r0.ops_size(), 2);
  EXPECT_EQ(r0.ops(0).name(), "MPI_Send");  // 50 ns > 40 ns
  EXPECT_EQ(r0.ops(0).category(), v1::CATEGORY_MPI);
  EXPECT_EQ(r0.ops(0).calls(), 1);
  EXPECT_EQ(r0.ops(0).bytes(), 4096);
  EXPECT_EQ(r0.ops(0).dur_ns(), 50);
  ASSERT_EQ(r0.ops(0).buckets_size(), 1);
  EXPECT_EQ(r0.ops(0).buckets(0).log2(), 12);
  const v1::OpStats& allreduce = r0.ops(1);
  EXPECT_EQ(allreduce.name(), "MPI_Allreduce");
  EXPECT_EQ(allreduce.calls(), 2);
  EXPECT_EQ(allreduce.bytes(), 8);
  EXPECT_EQ(allreduce.dur_ns(), 40);
  ASSERT_EQ(allreduce.buckets_size(), 2);
  EXPECT_EQ(allreduce.buckets(0).log2(), -1);
  EXPECT_EQ(allreduce.buckets(0).calls(), 1);
  EXPECT_EQ(allreduce.buckets(0).dur_ns(), 30);
  EXPECT_EQ(allreduce.buckets(1).log2(), 3);
  EXPECT_EQ(allreduce.buckets(1).bytes(), 8);
  EXPECT_EQ(allreduce.buckets(1).dur_ns(), 10);

  const v1::RankStats& r1 = reply.ranks(1);
  ASSERT_EQ(r1.ops_size(), 1);
  EXPECT_EQ(r1.ops(0).name(), "MPI_Allreduce");
  EXPECT_EQ(r1.ops(0).dur_ns(), 40);

  const v1::RankStats& r2 = reply.ranks(2);  // imported
  ASSERT_EQ(r2.ops_size(), 1);
  EXPECT_EQ(r2.ops(0).name(), "MPI_Send");
  EXPECT_EQ(r2.ops(0).calls(), 2);
  EXPECT_EQ(r2.ops(0).bytes(), 64);
  EXPECT_EQ(r2.ops(0).dur_ns(), 500);
  ASSERT_EQ(r2.ops(0).buckets_size(), 1);
  EXPECT_EQ(r2.ops(0).buckets(0).log2(), 5);
  EXPECT_EQ(r2.ops(0).buckets(0).calls(), 2);
}

StoredArg StringArg(const std::string& key, const std::string& value) {
  StoredArg arg;
  arg.key = key;
  arg.type = StoredArg::Type::kString;
  arg.str = value;
  return arg;
}

StoredSpan At(StoredSpan span, const std::string& callsite) {
  span.args.push_back(StringArg("callsite", callsite));
  return span;
}

// StatsReply.callsites, a line each: "category name|callsite|calls|bytes|
// dur_ns".
std::string CallsiteRows(const v1::StatsReply& reply) {
  std::string rows;
  for (const v1::CallsiteStats& c : reply.callsites()) {
    rows += std::to_string(c.category()) + " " + c.name() + "|" + c.callsite() +
            "|" + std::to_string(c.calls()) + "|" + std::to_string(c.bytes()) +
            "|" + std::to_string(c.dur_ns()) + "\n";
  }
  return rows;
}

// by_callsite: the calls StatsReply.ops counts that have a "callsite"
// string arg, per (operation, call site); ties by name, then call site.
TEST(StatsTest, CountsCallsPerCallsite) {
  JobCatalog catalog;
  catalog.processes = {{1, "a", 0, 0, 1}, {2, "a", 1, 1, 2}};
  catalog.tracks = {{10, 1, v1::TRACK_KIND_THREAD, 1, ""},
                    {11, 2, v1::TRACK_KIND_THREAD, 1, ""}};
  catalog.ops = {{1, v1::CATEGORY_MPI, "MPI_Send"},
                 {2, v1::CATEGORY_MPI, "MPI_Isend"},
                 {3, v1::CATEGORY_MPI, "MPI_Init"},
                 {4, v1::CATEGORY_USER, "forward"},
                 {5, v1::CATEGORY_MPI, "MPI_Barrier"}};
  v1::SpanFilter filter;
  filter.add_ranks(0);
  auto selection = SpanSelection::Make(catalog, filter);
  ASSERT_TRUE(selection.ok());
  StoredSpan isend = At(Span(10, 2, 500, 1000, 64), "solve+0x1c in libfoo.so");
  isend.args.push_back(IntArg("call_ns", 40));
  StoredSpan int_callsite = Span(10, 1, 800, 7, 8);
  int_callsite.args = {IntArg("callsite", 5)};
  StoredSpan counter = At(Counter(10, 1, 700, 5), "main at a.cc:5");
  const std::vector<StoredSpan> spans = {
      At(Span(10, 1, 100, 30, 8), "main at a.cc:5"),
      At(Span(10, 1, 200, 20, 8), "main at a.cc:5"),
      At(Span(10, 1, 300, 50, 100), "main at a.cc:9"),
      Span(10, 1, 400, 1000, 8),  // no call site: only in ops
      isend,                      // its call_ns, not issue to completion
      At(Span(10, 5, 600, 40), "main at a.cc:12"),
      At(Span(10, 3, 0, 50), "main at a.cc:2"),        // MPI_Init: no call
      At(Span(10, 4, 0, 5000), "main at a.cc:3"),      // not communication
      counter,                                         // no call
      int_callsite,                                    // not a string
      At(Span(10, 1, 900, 3, 8), ""),                  // empty
      At(Span(11, 1, 100, 500, 8), "main at a.cc:5"),  // rank 1: filtered
  };
  StatsOptions options;
  options.by_callsite = true;
  StatsBuilder stats(catalog, *selection, options);
  Feed(stats, *selection, spans);
  v1::StatsReply reply = stats.Finish();
  EXPECT_EQ(CallsiteRows(reply),
            "1 MPI_Send|main at a.cc:5|2|16|50\n"
            "1 MPI_Send|main at a.cc:9|1|100|50\n"
            "1 MPI_Barrier|main at a.cc:12|1|0|40\n"
            "1 MPI_Isend|solve+0x1c in libfoo.so|1|64|40\n");
  ASSERT_EQ(reply.ops_size(), 3);
  EXPECT_EQ(reply.ops(0).name(), "MPI_Send");
  EXPECT_EQ(reply.ops(0).calls(), 6);
  EXPECT_EQ(reply.ops(0).dur_ns(), 30 + 20 + 50 + 1000 + 7 + 3);

  StatsBuilder without(catalog, *selection);
  Feed(without, *selection, spans);
  EXPECT_EQ(without.Finish().callsites_size(), 0);
}

// Past max_callsites distinct pairs, a new pair's calls go to its
// operation's "(other call sites)"; pairs already held still count.
TEST(StatsTest, CountsCallsitesPastTheLimitAsOther) {
  JobCatalog catalog;
  catalog.processes = {{1, "a", 0, 0, 1}};
  catalog.tracks = {{10, 1, v1::TRACK_KIND_THREAD, 1, ""}};
  catalog.ops = {{1, v1::CATEGORY_MPI, "MPI_Send"},
                 {2, v1::CATEGORY_MPI, "MPI_Recv"}};
  auto selection = SpanSelection::Make(catalog, v1::SpanFilter());
  ASSERT_TRUE(selection.ok());
  StatsOptions options;
  options.by_callsite = true;
  options.max_callsites = 2;
  StatsBuilder stats(catalog, *selection, options);
  Feed(stats, *selection,
       {At(Span(10, 1, 100, 10, 1), "a"), At(Span(10, 1, 200, 20, 2), "b"),
        At(Span(10, 1, 300, 5, 4), "c"), At(Span(10, 1, 400, 1, 8), "a"),
        At(Span(10, 2, 500, 7, 16), "d"), At(Span(10, 1, 600, 8, 32), "e")});
  EXPECT_EQ(CallsiteRows(stats.Finish()),
            "1 MPI_Send|b|1|2|20\n"
            "1 MPI_Send|(other call sites)|2|36|13\n"
            "1 MPI_Send|a|2|9|11\n"
            "1 MPI_Recv|(other call sites)|1|16|7\n");
}

// max_callsite_bytes bounds the call-site text held, as max_callsites the
// pairs.
TEST(StatsTest, CountsCallsitesPastTheTextLimitAsOther) {
  JobCatalog catalog;
  catalog.processes = {{1, "a", 0, 0, 1}};
  catalog.tracks = {{10, 1, v1::TRACK_KIND_THREAD, 1, ""}};
  catalog.ops = {{1, v1::CATEGORY_NCCL, "AllReduce"}};
  auto selection = SpanSelection::Make(catalog, v1::SpanFilter());
  ASSERT_TRUE(selection.ok());
  StatsOptions options;
  options.by_callsite = true;
  options.max_callsite_bytes = 10;
  StatsBuilder stats(catalog, *selection, options);
  Feed(stats, *selection,
       {At(Span(10, 1, 100, 30, 0), "abcd"),
        At(Span(10, 1, 200, 20, 0), "efghijk"),   // 4 + 7 > 10
        At(Span(10, 1, 300, 10, 0), "lmnopq")});  // 4 + 6 = 10
  EXPECT_EQ(CallsiteRows(stats.Finish()),
            "2 AllReduce|abcd|1|0|30\n"
            "2 AllReduce|(other call sites)|1|0|20\n"
            "2 AllReduce|lmnopq|1|0|10\n");
}

}  // namespace
}  // namespace meridian
