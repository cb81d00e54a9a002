#include "query/ops/span_selection.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

JobCatalog CatalogWithRanks(std::vector<int32_t> ranks) {
  JobCatalog catalog;
  catalog.job.name = "j";
  int64_t id = 1;
  for (int32_t rank : ranks) {
    ProcessInfo p;
    p.id = id++;
    p.rank = rank;
    catalog.processes.push_back(p);
  }
  return catalog;
}

TEST(SpanSelectionTest, ARankTheJobLacksIsNotFoundWithTheRanksItHas) {
  const JobCatalog four = CatalogWithRanks({0, 1, 2, 3});
  EXPECT_TRUE(CheckRanksInJob(four, {0, 3}).ok());
  absl::Status missing = CheckRanksInJob(four, {1, 9});
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.message(), "job j has no rank 9 (its ranks: 0-3)");
  EXPECT_EQ(CheckRanksInJob(CatalogWithRanks({0, 1, 4, 6, 7}), {5}).message(),
            "job j has no rank 5 (its ranks: 0-1, 4, 6-7)");
  EXPECT_EQ(CheckRanksInJob(CatalogWithRanks({-1}), {0}).message(),
            "job j has no rank 0 (it has no ranks)");
  // A filter naming one: refused before anything is read.
  v1::SpanFilter filter;
  filter.add_ranks(2);
  filter.add_ranks(4);
  auto selection = SpanSelection::Make(four, filter);
  ASSERT_FALSE(selection.ok());
  EXPECT_EQ(selection.status().message(),
            "job j has no rank 4 (its ranks: 0-3)");
  filter.clear_ranks();
  filter.add_ranks(2);
  EXPECT_TRUE(SpanSelection::Make(four, filter).ok());
}

}  // namespace
}  // namespace meridian
