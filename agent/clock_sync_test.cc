// ClockSync against a collector that never answers (testing/
// silent_collector.h): stopping cancels the probe under way rather than
// wait out its 1 s deadline, and the model stays empty.
#include "agent/clock_sync.h"

#include "gtest/gtest.h"
#include "testing/silent_collector.h"

namespace meridian {
namespace {

TEST(ClockSyncTest, StoppingCancelsAProbeTheCollectorDoesNotAnswer) {
  auto silent = SilentCollector::Start(SilentCollector::Kind::kGrpc);
  ASSERT_TRUE(silent.ok()) << silent.status();
  auto sync = std::make_unique<ClockSync>(
      grpc::CreateChannel((*silent)->address(),
                          grpc::InsecureChannelCredentials()),
      ClockSkew{}, /*period_ms=*/3600000);
  ASSERT_TRUE(
      (*silent)->WaitFor("/meridian.v1.Clock/Now", 1, absl::Seconds(30)));
  EXPECT_EQ(sync->Model().reference_ns(), 0);
  const absl::Time began = absl::Now();
  sync.reset();
  // Without the cancel it would wait for the probe's 1 s deadline.
  EXPECT_LT(absl::Now() - began, absl::Milliseconds(900));
}

}  // namespace
}  // namespace meridian
