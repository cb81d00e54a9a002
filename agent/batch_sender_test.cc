// BatchSender against a collector that never answers (testing/
// silent_collector.h): the ack timeout and Stop() end a round that waits on
// it, and its batches stay queued for the spool.
#include "agent/batch_sender.h"

#include <stdlib.h>

#include "gtest/gtest.h"
#include "testing/silent_collector.h"

namespace meridian {
namespace {

constexpr char kStream[] = "/meridian.v1.Ingest/Stream";

class BatchSenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/meridian-sender-XXXXXX";
    dir_ = mkdtemp(dir);
    auto spool = Spool::Open(dir_ + "/spool", 1 << 20);
    ASSERT_TRUE(spool.ok()) << spool.status();
    spool_ = std::move(*spool);
    auto silent = SilentCollector::Start(SilentCollector::Kind::kGrpc);
    ASSERT_TRUE(silent.ok()) << silent.status();
    silent_ = std::move(*silent);
  }
  void TearDown() override { (void)!system(("rm -rf " + dir_).c_str()); }

  std::unique_ptr<BatchSender> Sender(absl::Duration ack_timeout) {
    return std::make_unique<BatchSender>(
        grpc::CreateChannel(silent_->address(),
                            grpc::InsecureChannelCredentials()),
        spool_.get(),
        [this] {
          absl::MutexLock lock(&mu_);
          ++rounds_;
        },
        ack_timeout);
  }

  static v1::Batch Batch(uint64_t seq, int spans) {
    v1::Batch batch;
    batch.set_agent_id("node/agent-1");
    batch.set_batch_seq(seq);
    batch.add_strings("");
    for (int i = 0; i < spans; ++i) batch.add_spans()->set_start_ns(i);
    return batch;
  }

  // Waits (bounded) until `n` rounds have ended.
  bool RoundsEnded(int n) {
    absl::MutexLock lock(&mu_);
    auto ended = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return rounds_ >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&ended), absl::Seconds(30));
  }

  std::string dir_;
  std::unique_ptr<Spool> spool_;
  std::unique_ptr<SilentCollector> silent_;
  absl::Mutex mu_;
  int rounds_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST_F(BatchSenderTest, StopCancelsTheRoundWaitingOnTheCollector) {
  std::unique_ptr<BatchSender> sender = Sender(absl::Hours(1));
  sender->Enqueue(0, Batch(7, 3));
  ASSERT_TRUE(silent_->WaitFor(kStream, 1, absl::Seconds(30)));
  const absl::Time began = absl::Now();
  sender->Stop();
  EXPECT_LT(absl::Now() - began, absl::Seconds(5));
  const BatchSender::State state = sender->state();
  EXPECT_EQ(state.queued_batches, 1u);
  EXPECT_EQ(state.queued_spans, 3u);
  EXPECT_EQ(state.memory_batches, 1u);
  EXPECT_EQ(state.sent_spans, 0u);
  EXPECT_TRUE(sender->TakeDelivered().empty());
  // The batch is still there to spool.
  std::vector<uint64_t> spilled;
  ASSERT_TRUE(
      sender
          ->Spill([&](const v1::Batch& b) { return spool_->Append(b, {}); },
                  [&](uint64_t seq) { spilled.push_back(seq); })
          .ok());
  EXPECT_EQ(spilled, std::vector<uint64_t>{7});
  EXPECT_EQ(sender->state().spooled_spans, 3u);
}

TEST_F(BatchSenderTest, NoAckWithinTheTimeoutMakesTheCollectorUnreachable) {
  std::unique_ptr<BatchSender> sender = Sender(absl::Milliseconds(200));
  sender->Enqueue(0, Batch(1, 2));
  ASSERT_TRUE(RoundsEnded(1));
  const BatchSender::State state = sender->state();
  EXPECT_TRUE(state.unreachable);
  EXPECT_EQ(state.queued_batches, 1u);
  EXPECT_EQ(state.memory_batches, 1u);
  EXPECT_EQ(state.sent_spans, 0u);
  sender->Stop();
}

}  // namespace
}  // namespace meridian
