#include "testing/synthetic_job.h"

#include "gtest/gtest.h"
#include "wire/batch_validator.h"

namespace meridian {
namespace {

TEST(SyntheticJobTest, SplitsRanksOverNodesInValidBatches) {
  SyntheticJob job;
  job.ranks = 5;
  job.nodes = 2;
  job.steps = 7;
  job.spans_per_batch = 10;
  EXPECT_EQ(SyntheticNodeOf(job, 2), 0);
  EXPECT_EQ(SyntheticNodeOf(job, 3), 1);
  int spans = 0;
  for (int node = 0; node < job.nodes; ++node) {
    std::vector<v1::Batch> batches = SyntheticBatches(job, node);
    uint64_t seq = 0;
    for (const v1::Batch& batch : batches) {
      v1::Batch checked = batch;
      std::vector<SpanColumns> decoded;
      BatchRepairs repairs;
      EXPECT_TRUE(ValidateBatch(&checked, &decoded, &repairs).ok());
      EXPECT_EQ(repairs.spans_dropped, 0u);
      EXPECT_EQ(repairs.strings_repaired, 0u);
      EXPECT_EQ(batch.batch_seq(), ++seq);
      EXPECT_EQ(batch.agent_id(), SyntheticAgentId(job, node));
      spans += batch.spans_size();
    }
  }
  EXPECT_EQ(spans, job.ranks * (1 + kSyntheticSpansPerStep * job.steps));
}

}  // namespace
}  // namespace meridian
