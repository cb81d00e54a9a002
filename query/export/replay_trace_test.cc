#include "query/export/replay_trace.h"

#include <string>

#include "gtest/gtest.h"
#include "testing/scenario_fixture.h"
#include "testing/text_count.h"

namespace meridian {
namespace {

// p2p-chain with "compute" halved: each span twice, measured and predicted.
TEST(ReplayTraceTest, MeasuredAndPredictedSideBySide) {
  auto f = ScenarioFixture::Load("p2p-chain");
  ASSERT_NE(f, nullptr);
  ReplayChanges changes;
  changes.scales = {{"compute", 0.5}};
  auto times = Replay(*f->graph, changes);
  ASSERT_TRUE(times.ok()) << times.status();
  std::string trace;
  int pieces = 0;
  ASSERT_TRUE(WriteReplayTrace(*f->spans, *times, [&](absl::string_view s) {
    trace.append(s.data(), s.size());
    ++pieces;
    return true;
  }));
  EXPECT_EQ(pieces, 1);
  EXPECT_EQ(trace.rfind("{\"traceEvents\":[", 0), 0u);
  EXPECT_EQ(CountOf(trace, "\"ph\":\"X\""), 2 * 10);
  EXPECT_EQ(CountOf(trace, "\"name\":\"rank 3 measured\""), 1);
  EXPECT_EQ(CountOf(trace, "\"name\":\"rank 3 predicted\""), 1);
  // Rank 0's compute, measured [0, 1 ms) and predicted [0, 0.5 ms); rank
  // 3's, measured from 3.15 ms and predicted from 1.65 ms.
  EXPECT_EQ(CountOf(trace,
                    "\"name\":\"compute\",\"cat\":\"user\",\"pid\":1,\"tid\":1,"
                    "\"ts\":0.000,\"dur\":1000.000}"),
            1)
      << trace;
  EXPECT_EQ(CountOf(trace,
                    "\"name\":\"compute\",\"cat\":\"user\",\"pid\":2,\"tid\":1,"
                    "\"ts\":0.000,\"dur\":500.000}"),
            1);
  EXPECT_EQ(CountOf(trace,
                    "\"name\":\"compute\",\"cat\":\"user\",\"pid\":8,\"tid\":1,"
                    "\"ts\":1650.000,\"dur\":500.000}"),
            1);
  EXPECT_NE(trace.find("\"otherData\":{\"epoch_ns\":"), std::string::npos);

  // A sink that stops: the writer stops too.
  EXPECT_FALSE(WriteReplayTrace(*f->spans, *times,
                                [](absl::string_view) { return false; }));
}

}  // namespace
}  // namespace meridian
