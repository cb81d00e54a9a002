#include "query/analysis/op_compare.h"

#include "gtest/gtest.h"
#include "query/ops/span_selection.h"
#include "testing/counting_store.h"
#include "testing/scenario_fixture.h"

namespace meridian {
namespace {

JobCatalog Catalog() {
  JobCatalog catalog;
  catalog.ops = {{1, v1::CATEGORY_MPI, "MPI_Allreduce"},
                 {2, v1::CATEGORY_USER, "forward"},
                 {3, v1::CATEGORY_MPI, "MPI_Bcast"}};
  return catalog;
}

StoredSpan Span(int64_t op, int64_t dur, int64_t bytes) {
  StoredSpan span;
  span.op_id = op;
  span.dur_ns = dur;
  span.bytes = bytes;
  return span;
}

TEST(OpCompareTest, DiffsPerOperationSortedAndCut) {
  const JobCatalog catalog = Catalog();
  OpTotalsBuilder a(catalog), b(catalog);
  for (int i = 0; i < 4; ++i) a.Add(Span(1, 1000, 8));
  for (int i = 0; i < 4; ++i) b.Add(Span(1, 2500, 8));
  a.Add(Span(2, 10000, 0));
  b.Add(Span(2, 10500, 0));
  b.Add(Span(2, 100, 0));
  a.Add(Span(3, 50, 1 << 20));  // only in A
  StoredSpan counter = Span(2, 0, 0);
  counter.kind = v1::SPAN_KIND_COUNTER;
  b.Add(counter);  // not an operation's call

  auto reply = CompareOps(a, b, "time", 0);
  ASSERT_TRUE(reply.ok()) << reply.status();
  ASSERT_EQ(reply->ops_size(), 3);
  EXPECT_EQ(reply->ops_total(), 3);
  EXPECT_EQ(reply->ops(0).name(), "MPI_Allreduce");
  EXPECT_EQ(reply->ops(0).diff().dur_ns(), 6000);
  EXPECT_EQ(reply->ops(0).diff().count(), 0);
  EXPECT_EQ(reply->ops(1).name(), "forward");
  EXPECT_EQ(reply->ops(1).a().count(), 1);
  EXPECT_EQ(reply->ops(1).b().count(), 2);
  EXPECT_EQ(reply->ops(1).diff().dur_ns(), 600);
  EXPECT_EQ(reply->ops(2).name(), "MPI_Bcast");
  EXPECT_EQ(reply->ops(2).b().count(), 0);
  EXPECT_EQ(reply->ops(2).diff().dur_ns(), -50);
  EXPECT_EQ(reply->ops(2).diff().bytes(), -(1 << 20));
  EXPECT_EQ(reply->total_a().count(), 6);
  EXPECT_EQ(reply->total_b().dur_ns(), 4 * 2500 + 10600);

  auto by_bytes = CompareOps(a, b, "bytes", 1);
  ASSERT_TRUE(by_bytes.ok());
  ASSERT_EQ(by_bytes->ops_size(), 1);
  EXPECT_EQ(by_bytes->ops_total(), 3);
  EXPECT_EQ(by_bytes->ops(0).name(), "MPI_Bcast");

  auto by_count = CompareOps(a, b, "count", 0);
  ASSERT_TRUE(by_count.ok());
  EXPECT_EQ(by_count->ops(2).name(), "MPI_Allreduce");  // count diff 0

  auto by_name = CompareOps(a, b, "name", 0);
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->ops(0).name(), "MPI_Allreduce");
  EXPECT_EQ(by_name->ops(2).name(), "forward");
}

TEST(OpCompareTest, UnknownSortIsAClearError) {
  const JobCatalog catalog = Catalog();
  OpTotalsBuilder a(catalog), b(catalog);
  auto reply = CompareOps(a, b, "speed", 0);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(reply.status().message(),
            "unknown sort \"speed\": use time, count, bytes or name");
}

// Two ranks of one job: one scan, the same totals as a scan per rank.
TEST(OpCompareTest, TwoRanksOfOneJobAreReadInOneScan) {
  auto f = ScenarioFixture::Load("slow-rank");
  ASSERT_NE(f, nullptr);
  CountingStore counting(*f->store);
  OpTotalsBuilder a(f->catalog), b(f->catalog);
  absl::Status added = AddRankTotals(counting, f->catalog, 0, 2, &a, &b);
  ASSERT_TRUE(added.ok()) << added;
  EXPECT_EQ(counting.scans(), 1);

  // What Compare read before: a scan of each rank's selection.
  auto one_rank = [&](int32_t rank) {
    v1::SpanFilter filter;
    filter.add_ranks(rank);
    auto selection = SpanSelection::Make(f->catalog, filter);
    EXPECT_TRUE(selection.ok());
    OpTotalsBuilder totals(f->catalog);
    EXPECT_TRUE(f->store
                    ->Scan(f->catalog.job, ScanRangeOf(filter, *selection),
                           [&](const StoredSpan& s) {
                             if (selection->Selects(s)) totals.Add(s);
                             return true;
                           })
                    .ok());
    return totals;
  };
  auto same = [](const OpTotalsBuilder& x, const OpTotalsBuilder& y) {
    ASSERT_EQ(x.totals().size(), y.totals().size());
    for (const auto& [key, t] : x.totals()) {
      EXPECT_EQ(t.ShortDebugString(), y.totals().at(key).ShortDebugString())
          << key.second;
    }
  };
  same(a, one_rank(0));
  same(b, one_rank(2));
  // 4 steps: rank 2's "forward" 5 ms each, rank 0's 3 ms.
  const OpTotalsBuilder::Key forward{v1::CATEGORY_USER, "forward"};
  EXPECT_EQ(a.totals().at(forward).count(), 4);
  EXPECT_EQ(a.totals().at(forward).dur_ns(), 4 * 3 * kMs);
  EXPECT_EQ(b.totals().at(forward).dur_ns(), 4 * 5 * kMs);

  // The same rank twice: both sides, still one scan.
  OpTotalsBuilder c(f->catalog), d(f->catalog);
  ASSERT_TRUE(AddRankTotals(counting, f->catalog, 1, 1, &c, &d).ok());
  EXPECT_EQ(counting.scans(), 2);
  same(c, d);
  same(c, one_rank(1));

  // An unknown rank: NOT_FOUND naming it, nothing read.
  absl::Status missing = AddRankTotals(counting, f->catalog, 0, 9, &c, &d);
  EXPECT_TRUE(absl::IsNotFound(missing)) << missing;
  EXPECT_EQ(missing.message(), "job slow-rank has no rank 9 (its ranks: 0-3)");
  EXPECT_EQ(counting.scans(), 2);
}

}  // namespace
}  // namespace meridian
