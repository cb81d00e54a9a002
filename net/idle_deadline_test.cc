#include "net/idle_deadline.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "gtest/gtest.h"
#include "meridian/v1/query.grpc.pb.h"
#include "testing/silent_collector.h"

namespace meridian {
namespace {

class IdleDeadlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto silent = SilentCollector::Start(SilentCollector::Kind::kGrpc);
    ASSERT_TRUE(silent.ok()) << silent.status();
    silent_ = std::move(*silent);
    stub_ = v1::Query::NewStub(grpc::CreateChannel(
        silent_->address(), grpc::InsecureChannelCredentials()));
  }

  // A streamed call the collector never answers: read until it ends.
  grpc::Status ReadSilentStream(grpc::ClientContext* context) {
    v1::ExportRequest request;
    auto reader = stub_->ExportTrace(context, request);
    v1::TraceChunk chunk;
    while (reader->Read(&chunk)) {
    }
    return reader->Finish();
  }

  std::unique_ptr<SilentCollector> silent_;
  std::unique_ptr<v1::Query::Stub> stub_;
};

TEST_F(IdleDeadlineTest, CancelsACallSilentForTheTimeout) {
  grpc::ClientContext context;
  const absl::Time began = absl::Now();
  IdleDeadline idle(&context, absl::Milliseconds(200));
  const grpc::Status status = ReadSilentStream(&context);
  const absl::Duration took = absl::Now() - began;
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_TRUE(idle.expired());
  EXPECT_EQ(idle.timeout(), absl::Milliseconds(200));
  EXPECT_GE(took, absl::Milliseconds(200));
  EXPECT_LT(took, absl::Seconds(10)) << "the call was not cancelled in time";
  EXPECT_EQ(silent_->calls(),
            (std::vector<std::string>{"/meridian.v1.Query/ExportTrace"}));
}

TEST_F(IdleDeadlineTest, LeavesACallAloneBeforeItsTimeout) {
  // The call's own (fixed) deadline ends it first: DEADLINE_EXCEEDED, not
  // a cancel.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(200));
  IdleDeadline idle(&context, absl::Hours(1));
  EXPECT_EQ(ReadSilentStream(&context).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_FALSE(idle.expired());
}

TEST_F(IdleDeadlineTest, DestroyedItNeverCancels) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(1));
  { IdleDeadline idle(&context, absl::Milliseconds(200)); }
  EXPECT_EQ(ReadSilentStream(&context).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
}

// On a test's clock: progress every 100 ms over 1.5 s keeps a 1 s
// deadline from passing; 1 s of silence after the last passes it.
TEST(IdleDeadlineProgressTest, ProgressMovesTheDeadline) {
  // Not a call: a context no call uses, so only expired() can tell.
  grpc::ClientContext context;
  std::atomic<int64_t> now_ms{0};
  IdleDeadline idle(&context, absl::Seconds(1), [&now_ms] {
    return std::chrono::steady_clock::time_point(
        std::chrono::milliseconds(now_ms.load()));
  });
  for (int i = 0; i < 15; ++i) {
    now_ms += 100;
    idle.Progress();
    idle.ClockMoved();
    EXPECT_FALSE(idle.expired()) << "at " << now_ms << " ms";
  }
  now_ms += 999;  // 1 ms short of the deadline
  idle.ClockMoved();
  EXPECT_FALSE(idle.expired());
  now_ms += 1;
  idle.ClockMoved();
  EXPECT_TRUE(idle.AwaitExpired(absl::Seconds(60)));
}

}  // namespace
}  // namespace meridian
