#include "cli/collector_call.h"

#include <chrono>

#include "gtest/gtest.h"

namespace meridian {
namespace {

const CollectorTarget kCollector{"head:7070", 30};

TEST(CollectorCallTest, EachFailureSaysWhatToDo) {
  EXPECT_EQ(CallFailure("jobs",
                        grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                                     "Deadline Exceeded"),
                        kCollector),
            "meridian: jobs: the collector at head:7070 did not answer "
            "within 30 s (--request-timeout)");
  EXPECT_EQ(
      CallFailure("export", grpc::Status(grpc::StatusCode::CANCELLED, "x"),
                  kCollector, /*idle_expired=*/true),
      "meridian: export: the collector at head:7070 sent nothing for 30 s "
      "(--request-timeout)");
  EXPECT_EQ(CallFailure("stats",
                        grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                     "Connection refused"),
                        kCollector),
            "meridian: stats: cannot reach the collector at head:7070 "
            "(Connection refused); is meridian-collector running there? "
            "(--collector HOST:PORT)");
  EXPECT_EQ(CallFailure("delete",
                        grpc::Status(grpc::StatusCode::NOT_FOUND,
                                     "no job \"j\" in the store"),
                        kCollector),
            "meridian: delete: no job \"j\" in the store");
}

TEST(CollectorCallTest, TheDeadlineIsTheRequestTimeoutFromNow) {
  grpc::ClientContext context;
  const auto before = std::chrono::system_clock::now();
  SetRequestDeadline(kCollector, &context);
  const auto after = std::chrono::system_clock::now();
  EXPECT_GE(context.deadline(), before + std::chrono::seconds(30));
  EXPECT_LE(context.deadline(), after + std::chrono::seconds(30));
  EXPECT_EQ(kCollector.request_timeout(), absl::Seconds(30));
}

}  // namespace
}  // namespace meridian
