#include "wire/batch_builder.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

TEST(BatchBuilderTest, InternsStringsAndMakesEachBatchSelfContained) {
  BatchBuilder builder("agent-x", 7);
  int p0 = builder.DeclareProcess({"job", "host", 0, 0, 10});
  int p1 = builder.DeclareProcess({"job", "host", 1, 1, 11});
  int t0 = builder.DeclareTrack(p0, v1::TRACK_KIND_THREAD, 100, "main");
  int t1 = builder.DeclareTrack(p1, v1::TRACK_KIND_THREAD, 101, "main");
  builder.AddSpan(t0, v1::CATEGORY_MPI, "MPI_Send", 1, 2);
  builder.AddSpan(t0, v1::CATEGORY_MPI, "MPI_Send", 3, 4);
  v1::Batch first = builder.Take();
  EXPECT_EQ(first.agent_id(), "agent-x");
  EXPECT_EQ(first.batch_seq(), 7u);
  // "", "job", "host", "main", "MPI_Send": each once.
  ASSERT_EQ(first.strings_size(), 5);
  EXPECT_EQ(first.strings(0), "");
  EXPECT_EQ(first.processes_size(), 1);
  EXPECT_EQ(first.tracks_size(), 1);
  EXPECT_EQ(first.spans(1).name(), first.spans(0).name());

  builder.AddSpan(t1, v1::CATEGORY_MPI, "MPI_Recv", 5, 6);
  v1::Batch second = builder.Take();
  EXPECT_EQ(second.batch_seq(), 8u);
  ASSERT_EQ(second.processes_size(), 1);
  EXPECT_EQ(second.processes(0).rank(), 1);
  EXPECT_EQ(second.strings(second.spans(0).name()), "MPI_Recv");
  EXPECT_EQ(second.tracks(0).process(), 0u);
  EXPECT_EQ(builder.spans(), 0u);
}

// The agent's builder lives for months: after ForgetDeclarations it holds
// nothing of the processes and tracks before, and what is declared again
// goes out as before.
TEST(BatchBuilderTest, ForgottenDeclarationsAreDeclaredAgain) {
  BatchBuilder builder("agent-x");
  const int p = builder.DeclareProcess({"job", "host", 3, 0, 10});
  builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 100, "main");
  EXPECT_EQ(builder.declared(), 2u);
  const uint64_t before = builder.declarations();
  builder.Take();
  builder.ForgetDeclarations();
  EXPECT_EQ(builder.declared(), 0u);
  EXPECT_NE(builder.declarations(), before);
  const int again = builder.DeclareProcess({"job", "host", 3, 0, 10});
  const int track =
      builder.DeclareTrack(again, v1::TRACK_KIND_THREAD, 100, "main");
  builder.AddSpan(track, v1::CATEGORY_MPI, "MPI_Send", 1, 2);
  v1::Batch batch = builder.Take();
  ASSERT_EQ(batch.processes_size(), 1);
  EXPECT_EQ(batch.processes(0).rank(), 3);
  ASSERT_EQ(batch.tracks_size(), 1);
  EXPECT_EQ(batch.tracks(0).id(), 100);
  EXPECT_EQ(batch.strings(batch.tracks(0).name()), "main");
}

}  // namespace
}  // namespace meridian
