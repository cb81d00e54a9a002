#include "store/clickhouse_client.h"

#include <stdlib.h>

#include <iostream>
#include <tuple>

#include "gtest/gtest.h"
#include "store/row_binary.h"
#include "testing/clickhouse_server.h"

namespace meridian {
namespace {

class ClickHouseClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = ClickHouseServer::Start();
    if (absl::IsFailedPrecondition(server.status())) {
      GTEST_SKIP() << server.status().message();
    }
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  std::unique_ptr<ClickHouseServer> server_;
};

// Which ClickHouse answers: tests/clickhouse_current.sh sets
// MERIDIAN_CLICKHOUSE_VERSION to the current release it installed, so a run
// that fell back to another server fails here.
TEST_F(ClickHouseClientTest, IsTheClickHouseAskedFor) {
  auto client = ClickHouseClient::Connect(server_->endpoint());
  ASSERT_TRUE(client.ok()) << client.status();
  auto version = (*client)->Query("SELECT version()");
  ASSERT_TRUE(version.ok()) << version.status();
  std::cout << "ClickHouse " << *version;
  const char* wanted = getenv("MERIDIAN_CLICKHOUSE_VERSION");
  if (wanted != nullptr) {
    EXPECT_EQ(*version, std::string(wanted) + "\n");
  }
}

// A real server: a MergeTree table written and read back, hostile bytes
// intact; errors with ClickHouse's own message.
TEST_F(ClickHouseClientTest, WritesReadsAndSaysWhatWentWrong) {
  auto client = ClickHouseClient::Connect(server_->endpoint());
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)
                  ->Execute("CREATE TABLE spans (job UInt64, track UInt64, "
                            "start Int64, data String) ENGINE = MergeTree "
                            "ORDER BY (job, track, start)")
                  .ok());
  const std::string hostile("tab\there\nnewline\\back\0nul", 25);
  RowBinaryWriter rows_in;
  for (const auto& [track, start, data] :
       {std::tuple<int64_t, int64_t, std::string>{2, -3, hostile},
        {1, 5, "x"}}) {
    rows_in.Int64(1);  // job (UInt64: the same bytes)
    rows_in.Int64(track);
    rows_in.Int64(start);
    rows_in.String(data);
  }
  ASSERT_TRUE((*client)->InsertRowBinary("spans", rows_in.bytes()).ok());
  auto rows = (*client)->Query(
      "SELECT track, start, length(data) FROM spans ORDER BY track");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(*rows, "1\t5\t1\n2\t-3\t25\n");
  // Read back as RowBinary, streamed: the bytes exactly.
  auto back = (*client)->Stream(
      "SELECT data FROM spans WHERE track = 2 FORMAT RowBinary");
  ASSERT_TRUE(back.ok()) << back.status();
  auto view = (*back)->Fill(1 << 20);
  ASSERT_TRUE(view.ok()) << view.status();
  RowBinaryReader reader(*view);
  absl::string_view data;
  ASSERT_TRUE(reader.String(&data));
  EXPECT_EQ(data, hostile);
  EXPECT_TRUE(reader.done());
  EXPECT_TRUE((*back)->ended());

  auto bad = (*client)->Query("SELECT nope FROM spans");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("nope"), absl::string_view::npos)
      << bad.status();

  ClickHouseEndpoint wrong = server_->endpoint();
  wrong.password = "not-it";
  auto refused = (*ClickHouseClient::Connect(wrong))->Query("SELECT 1");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnauthenticated)
      << refused.status();

  ClickHouseEndpoint gone = server_->endpoint();
  gone.port = 1;
  auto unreachable = (*ClickHouseClient::Connect(gone))->Query("SELECT 1");
  EXPECT_EQ(unreachable.status().code(), absl::StatusCode::kUnavailable);

  // A crash (SIGKILL) and restart keeps what was inserted.
  ASSERT_TRUE(server_->Restart().ok());
  auto after = (*client)->Query("SELECT count() FROM spans");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(*after, "2\n");
}

}  // namespace
}  // namespace meridian
