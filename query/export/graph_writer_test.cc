#include "query/export/graph_writer.h"

#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "testing/scenario_fixture.h"
#include "testing/text_count.h"

namespace meridian {
namespace {

TEST(GraphWriterTest, ChainAsDotAndGraphMl) {
  auto f = ScenarioFixture::Load("p2p-chain");
  ASSERT_NE(f, nullptr);
  auto dot = StepGraph(*f->graph, 0, v1::GRAPH_FORMAT_DOT);
  ASSERT_TRUE(dot.ok()) << dot.status();
  EXPECT_TRUE(absl::StartsWith(*dot, "digraph \"step 0\" {\n"));
  EXPECT_TRUE(absl::EndsWith(*dot, "}\n"));
  // 10 spans: 3 receives, 4 computes, 3 sends.
  EXPECT_EQ(CountOf(*dot, "dur_ns="), 10);
  // Program order: rank 0 compute->send, ranks 1-2 recv->compute->send,
  // rank 3 recv->compute; 3 messages, each the binding one.
  EXPECT_EQ(CountOf(*dot, "type=\"program\""), 1 + 2 + 2 + 1);
  EXPECT_EQ(CountOf(*dot, "type=\"message\", binding=true"), 3);
  EXPECT_NE(dot->find("label=\"rank 3\\nMPI_Recv\\n3.150 ms\""),
            std::string::npos);

  auto graphml = StepGraph(*f->graph, 0, v1::GRAPH_FORMAT_GRAPHML);
  ASSERT_TRUE(graphml.ok());
  EXPECT_EQ(CountOf(*graphml, "<node id="), 10);
  EXPECT_EQ(CountOf(*graphml, "<edge source="), 6 + 3);
  EXPECT_EQ(CountOf(*graphml, "<data key=\"binding\">true</data>"), 3);
  EXPECT_TRUE(absl::EndsWith(*graphml, "</graphml>\n"));
}

// A step with gaps around and between its two children: program order is
// step -> first -> second, with no edge back into the step.
TEST(GraphWriterTest, AnEnclosingSpanLeadsToItsFirstChildWithoutCycles) {
  JobCatalog catalog;
  catalog.processes = {{1, "node-0", 0, 0, 100}};
  catalog.tracks = {{1, 1, v1::TRACK_KIND_THREAD, 100, "main"}};
  catalog.ops = {{1, v1::CATEGORY_USER, "step"},
                 {2, v1::CATEGORY_USER, "first"},
                 {3, v1::CATEGORY_USER, "second"}};
  JobSpans spans(catalog);
  for (const auto& [op, start, end] :
       {std::tuple{1, 0, 100}, {2, 10, 30}, {3, 50, 70}}) {
    StoredSpan span;
    span.track_id = 1;
    span.op_id = op;
    span.start_ns = start;
    span.dur_ns = end - start;
    span.step = 0;
    spans.Add(span, span.start_ns, span.dur_ns);
  }
  spans.Finish();
  DependencyGraph graph(spans);
  auto dot = StepGraph(graph, 0, v1::GRAPH_FORMAT_DOT);
  ASSERT_TRUE(dot.ok()) << dot.status();
  EXPECT_EQ(CountOf(*dot, "type=\"program\""), 2);
  EXPECT_EQ(CountOf(*dot, "s0 -> s1 [type=\"program\""), 1) << *dot;
  EXPECT_EQ(CountOf(*dot, "s1 -> s2 [type=\"program\""), 1) << *dot;
}

// Generalized active target on one window (comm 9): rank 1 posts to rank 0
// at 100 and waits from 120 to 400; rank 0 starts towards rank 1 from 50
// to 110 (it waited for the post), and completes at 300. Two epoch edges,
// both binding: post -> start, complete -> wait.
TEST(GraphWriterTest, ActiveTargetEpochsAreEpochEdges) {
  JobCatalog catalog;
  catalog.processes = {{1, "node-0", 0, 0, 100}, {2, "node-0", 1, 0, 101}};
  catalog.tracks = {{1, 1, v1::TRACK_KIND_THREAD, 100, "main"},
                    {2, 2, v1::TRACK_KIND_THREAD, 101, "main"}};
  catalog.ops = {{1, v1::CATEGORY_MPI, "MPI_Win_start"},
                 {2, v1::CATEGORY_MPI, "MPI_Win_complete"},
                 {3, v1::CATEGORY_MPI, "MPI_Win_post"},
                 {4, v1::CATEGORY_MPI, "MPI_Win_wait"}};
  JobSpans spans(catalog);
  for (const auto& [track, op, start, end, group] :
       {std::tuple{1, 1, 50, 110, 1},
        {1, 2, 300, 310, -1},
        {2, 3, 100, 105, 0},
        {2, 4, 120, 400, -1}}) {
    StoredSpan span;
    span.track_id = track;
    span.op_id = op;
    span.start_ns = start;
    span.dur_ns = end - start;
    span.comm = 9;
    span.step = 0;
    if (group >= 0) {
      StoredArg arg;
      arg.key = "group";
      arg.type = StoredArg::Type::kInt;
      arg.int_value = group;
      span.args.push_back(arg);
    }
    spans.Add(span, span.start_ns, span.dur_ns);
  }
  spans.Finish();
  DependencyGraph graph(spans);
  auto dot = StepGraph(graph, 0, v1::GRAPH_FORMAT_DOT);
  ASSERT_TRUE(dot.ok()) << dot.status();
  EXPECT_EQ(CountOf(*dot, "type=\"epoch\", binding=true"), 2) << *dot;
  EXPECT_EQ(CountOf(*dot, "type=\"epoch\""), 2) << *dot;
}

TEST(GraphWriterTest, CollectiveInstancesAndUnknownStep) {
  auto f = ScenarioFixture::Load("late-every-other-step");
  ASSERT_NE(f, nullptr);
  auto dot = StepGraph(*f->graph, 1, v1::GRAPH_FORMAT_DOT);
  ASSERT_TRUE(dot.ok());
  // 8 spans and one instance node; 4 arrive + 4 complete edges, rank 1's
  // arrival binding.
  EXPECT_EQ(CountOf(*dot, "dur_ns="), 9);
  EXPECT_EQ(CountOf(*dot, "type=\"collective\""), 8);
  EXPECT_EQ(CountOf(*dot, "binding=true"), 1);
  EXPECT_NE(dot->find("MPI_Allreduce comm 1 seq 2"), std::string::npos);

  auto missing = StepGraph(*f->graph, 9, v1::GRAPH_FORMAT_DOT);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "no span of this job is tagged with step 9; `meridian steps` "
            "lists the steps");
}

}  // namespace
}  // namespace meridian
