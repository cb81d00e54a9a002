#include "testing/synthetic_store.h"

#include <cstdlib>
#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(SyntheticStoreTest, WritesEveryNodesSpans) {
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/synthetic.db";
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  SyntheticJob job;
  job.job = "written";
  job.ranks = 3;
  job.nodes = 2;
  job.steps = 5;
  job.layers = 2;
  job.spans_per_batch = 1;  // 102 batches on node 0: two writes
  auto spans = WriteSyntheticJob(job, **store);
  ASSERT_TRUE(spans.ok()) << spans.status();
  // A rank: the Bcast, then 6 + 2 * 2 spans a step.
  const int64_t expected =
      job.ranks * (1 + (kSyntheticSpansPerStep + 2 * job.layers) * job.steps);
  EXPECT_EQ(expected, 153);
  EXPECT_EQ(*spans, expected);
  // The same job again: every batch a duplicate, nothing stored twice.
  auto again = WriteSyntheticJob(job, **store);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, 0);
  ASSERT_TRUE((*store)->BeginSnapshot().ok());
  auto catalog = (*store)->LoadCatalog("written");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(catalog->job.spans, expected);
}

TEST(SyntheticStoreTest, AReadOnlyStoreFailsTheWrite) {
  const std::string path =
      std::string(std::getenv("TEST_TMPDIR")) + "/read_only.db";
  ASSERT_TRUE(Store::Open(path).ok());  // created
  StoreOptions options;
  options.read_only = true;
  auto store = Store::Open(path, options);
  ASSERT_TRUE(store.ok()) << store.status();
  SyntheticJob job;
  auto spans = WriteSyntheticJob(job, **store);
  EXPECT_FALSE(spans.ok());
}

}  // namespace
}  // namespace meridian
