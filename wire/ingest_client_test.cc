// IngestClient against collectors that do not answer (testing/
// silent_collector.h) and one that answers slowly: the ack timeout and
// Cancel().
#include "wire/ingest_client.h"

#include <chrono>
#include <memory>
#include <thread>

#include "gtest/gtest.h"
#include "testing/silent_collector.h"

namespace meridian {
namespace {

std::vector<v1::Batch> Batches(int n) {
  std::vector<v1::Batch> batches(n);
  for (int i = 0; i < n; ++i) {
    batches[i].set_agent_id("test-agent");
    batches[i].set_batch_seq(i + 1);
  }
  return batches;
}

std::shared_ptr<grpc::Channel> Connect(const std::string& address) {
  return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
}

class SilentIngestTest
    : public ::testing::TestWithParam<SilentCollector::Kind> {
 protected:
  void SetUp() override {
    auto silent = SilentCollector::Start(GetParam());
    ASSERT_TRUE(silent.ok()) << silent.status();
    silent_ = std::move(*silent);
  }
  std::unique_ptr<SilentCollector> silent_;
};

TEST_P(SilentIngestTest, HoldsASendNoLongerThanTheAckTimeout) {
  IngestClient client(Connect(silent_->address()));
  SendOptions options;
  options.ack_timeout = absl::Milliseconds(300);
  const absl::Time began = absl::Now();
  const absl::StatusOr<SendReport> report = client.SendAll(Batches(3), options);
  const absl::Duration took = absl::Now() - began;
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status(),
            absl::DeadlineExceededError(
                "the collector acknowledged nothing for 300 ms; 3 of 3 "
                "batches unacknowledged"));
  EXPECT_GE(took, absl::Milliseconds(300));
  // One stream, not max_streams of them: the next would be as silent.
  EXPECT_LT(took, absl::Seconds(5));
  if (GetParam() == SilentCollector::Kind::kGrpc) {
    EXPECT_EQ(silent_->calls(),
              (std::vector<std::string>{"/meridian.v1.Ingest/Stream"}));
  }
}

TEST_P(SilentIngestTest, CancelEndsTheSendUnderWayAndEveryLaterOne) {
  IngestClient client(Connect(silent_->address()));
  SendOptions options;
  options.ack_timeout = absl::Hours(1);
  absl::StatusOr<SendReport> report;
  std::thread sender([&] { report = client.SendAll(Batches(3), options); });
  // The stream is open (kGrpc), or the connection made (kTcp).
  const std::string opened = GetParam() == SilentCollector::Kind::kGrpc
                                 ? "/meridian.v1.Ingest/Stream"
                                 : "";
  ASSERT_TRUE(silent_->WaitFor(opened, 1, absl::Seconds(30)));
  const absl::Time began = absl::Now();
  client.Cancel();
  sender.join();
  EXPECT_LT(absl::Now() - began, absl::Seconds(5));
  const absl::Status cancelled =
      absl::CancelledError("sending was cancelled: the sender is stopping");
  EXPECT_EQ(report.status(), cancelled);
  EXPECT_EQ(client.SendAll(Batches(1), options).status(), cancelled);
  if (GetParam() == SilentCollector::Kind::kGrpc) {
    EXPECT_EQ(silent_->calls().size(), 1u) << "a stream after Cancel()";
  }
}

INSTANTIATE_TEST_SUITE_P(
    BothKinds, SilentIngestTest,
    ::testing::Values(SilentCollector::Kind::kTcp,
                      SilentCollector::Kind::kGrpc),
    [](const ::testing::TestParamInfo<SilentCollector::Kind>& info) {
      return std::string(KindName(info.param));
    });

// Acknowledges each batch `delay` after reading it, as a slow store would.
class SlowIngest : public v1::Ingest::Service {
 public:
  explicit SlowIngest(std::chrono::milliseconds delay) : delay_(delay) {}
  grpc::Status Stream(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<v1::Ack, v1::Batch>* stream) override {
    v1::Batch batch;
    while (stream->Read(&batch)) {
      std::this_thread::sleep_for(delay_);  // the slowness under test
      v1::Ack ack;
      ack.set_agent_id(batch.agent_id());
      ack.set_batch_seq(batch.batch_seq());
      ack.set_result(v1::Ack::RESULT_STORED);
      if (!stream->Write(ack)) break;
    }
    return grpc::Status::OK;
  }

 private:
  const std::chrono::milliseconds delay_;
};

TEST(SlowIngestTest, AcksThatKeepComingKeepTheStreamPastTheAckTimeout) {
  // 10 acks 150 ms apart: 1.5 s in all, each within the 1 s timeout.
  SlowIngest service(std::chrono::milliseconds(150));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  IngestClient client(Connect("127.0.0.1:" + std::to_string(port)));
  SendOptions options;
  options.ack_timeout = absl::Seconds(1);
  const absl::Time began = absl::Now();
  const absl::StatusOr<SendReport> report =
      client.SendAll(Batches(10), options);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_GT(absl::Now() - began, options.ack_timeout);
  EXPECT_EQ(report->stored, 10);
  EXPECT_EQ(report->streams, 1);
  server->Shutdown();
}

}  // namespace
}  // namespace meridian
