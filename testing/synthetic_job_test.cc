#include "testing/synthetic_job.h"

#include <set>

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

// With declare_ended, each process carries the job's world size, and is
// declared ended in its node's last batch only: with its last spans, or in
// a batch of its own where they filled the one before (batches of 1 span:
// each flushed as it fills). Batches of 4,096: one batch a node.
TEST(SyntheticJobTest, DeclareEndedMarksEachProcessInItsNodesLastBatch) {
  for (int per_batch : {4096, 1}) {
    SyntheticJob job;
    job.ranks = 5;
    job.nodes = 2;
    job.steps = 7;
    job.spans_per_batch = per_batch;
    job.declare_ended = true;
    for (int node = 0; node < job.nodes; ++node) {
      std::vector<v1::Batch> batches = SyntheticBatches(job, node);
      ASSERT_FALSE(batches.empty());
      std::set<int32_t> ended;
      for (size_t b = 0; b < batches.size(); ++b) {
        v1::Batch checked = batches[b];
        std::vector<SpanColumns> decoded;
        BatchRepairs repairs;
        ASSERT_TRUE(ValidateBatch(&checked, &decoded, &repairs).ok());
        for (const v1::Process& p : batches[b].processes()) {
          EXPECT_EQ(p.world_size(), 5);
          EXPECT_EQ(p.ended(), b + 1 == batches.size());
          if (p.ended()) ended.insert(p.rank());
        }
      }
      const std::set<int32_t> ranks =
          node == 0 ? std::set<int32_t>{0, 1, 2} : std::set<int32_t>{3, 4};
      EXPECT_EQ(ended, ranks);
      if (per_batch == 1) {
        EXPECT_EQ(batches.back().spans_size(), 0);
      }
    }
  }
}

// With layers, forward and backward are each cut into that many "layer"
// spans of the same step, inside the phase.
TEST(SyntheticJobTest, LayersFillForwardAndBackward) {
  SyntheticJob job;
  job.ranks = 2;
  job.nodes = 1;
  job.steps = 2;
  job.layers = 3;
  job.spans_per_batch = 7;
  int spans = 0, layers = 0;
  std::vector<int64_t> first_step_layers;
  for (const v1::Batch& batch : SyntheticBatches(job, 0)) {
    v1::Batch checked = batch;
    std::vector<SpanColumns> decoded;
    BatchRepairs repairs;
    ASSERT_TRUE(ValidateBatch(&checked, &decoded, &repairs).ok());
    EXPECT_EQ(repairs.spans_dropped, 0u);
    for (const v1::Span& span : batch.spans()) {
      ++spans;
      if (batch.strings(span.name()) != "layer") continue;
      ++layers;
      const int rank =
          batch.processes(batch.tracks(span.track()).process()).rank();
      if (rank == 0 && span.step() == 0) {
        first_step_layers.push_back(span.start_ns() - job.t0_ns);
        first_step_layers.push_back(span.dur_ns());
      }
    }
  }
  EXPECT_EQ(spans, job.ranks * (1 + (kSyntheticSpansPerStep + 6) * job.steps));
  EXPECT_EQ(layers, job.ranks * job.steps * 6);
  // Rank 0, step 0: forward [0, 3 ms) in 1 ms slices, backward [3, 7 ms)
  // in 4/3 ms ones, each 1 us short of the next.
  EXPECT_EQ(first_step_layers,
            (std::vector<int64_t>{0, 999000, 1000000, 999000, 2000000, 999000,
                                  3000000, 1332333, 4333333, 1332333, 5666666,
                                  1332333}));
}

}  // namespace
}  // namespace meridian
