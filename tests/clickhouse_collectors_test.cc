// Several collectors on one ClickHouse store (issue 22): two collectors and
// four agents write one job; one collector is SIGKILLed between a write's
// chunks and its commit record, its agents resend everything to the other,
// and every span is stored exactly once.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <string>
#include <thread>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "store/clickhouse_client.h"
#include "store/store.h"
#include "testing/runfile.h"
#include "testing/synthetic_job.h"
#include "testing/test_store.h"
#include "tests/collector_process.h"
#include "wire/batch_spans.h"
#include "wire/ingest_client.h"

namespace meridian {
namespace {

TEST(ClickHouseCollectorsTest, TwoCollectorsFourAgentsAKillAndEverySpanOnce) {
  auto location = NewStoreLocation(StoreKind::kClickHouse, "shared");
  if (absl::IsFailedPrecondition(location.status())) {
    GTEST_SKIP() << location.status().message();
  }
  ASSERT_TRUE(location.ok()) << location.status();
  const std::string binary = Runfile("collector/meridian-collector");

  SyntheticJob job;
  job.job = "shared";
  job.ranks = 8;
  job.nodes = 4;
  job.steps = 200;
  job.spans_per_batch = 50;
  std::vector<std::vector<v1::Batch>> agents;
  int64_t total_spans = 0, total_batches = 0;
  for (int node = 0; node < job.nodes; ++node) {
    agents.push_back(SyntheticBatches(job, node));
    for (const v1::Batch& b : agents.back()) total_spans += SpanCount(b);
    total_batches += static_cast<int64_t>(agents.back().size());
  }
  ASSERT_EQ(total_spans, 9608);

  // Collector A dies in its fifth write, after the chunks, before the
  // commit record; B is sound. Both started before any agent sends.
  setenv("MERIDIAN_FAILPOINT_KILL_BEFORE_COMMIT", "5", 1);
  auto a = CollectorProcess::Start(binary, *location);
  unsetenv("MERIDIAN_FAILPOINT_KILL_BEFORE_COMMIT");
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = CollectorProcess::Start(binary, *location);
  ASSERT_TRUE(b.ok()) << b.status();
  const auto connect_to = [](const std::string& address) {
    return [address] {
      return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    };
  };

  // Agents 0 and 1 send to A one batch at a time (so that A's writes are
  // many and small), 2 and 3 to B, all at once.
  std::vector<absl::StatusOr<SendReport>> to_a(2, absl::UnknownError(""));
  std::vector<std::thread> senders;
  for (int i = 0; i < 2; ++i) {
    senders.emplace_back([&, i] {
      IngestClient client(connect_to(a->address())());
      SendOptions one_at_a_time;
      one_at_a_time.window = 1;
      one_at_a_time.max_streams = 1;
      to_a[i] = client.SendAll(agents[i], one_at_a_time);
    });
  }
  auto to_b =
      SendConcurrently(connect_to(b->address()), {agents[2], agents[3]});
  for (std::thread& t : senders) t.join();
  // A's agents saw their streams break: A is dead or dying.
  ASSERT_FALSE(to_a[0].ok() && to_a[1].ok()) << "A outlived its failpoint";
  int status = 0;
  ASSERT_EQ(waitpid(a->pid(), &status, 0), a->pid());
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "collector A was not killed by its failpoint: " << status;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(to_b[i].ok()) << to_b[i].status();
    EXPECT_EQ(to_b[i]->stored, static_cast<int64_t>(agents[2 + i].size()));
    EXPECT_EQ(to_b[i]->duplicate, 0);
  }
  for (const auto& report : to_a) EXPECT_FALSE(report.ok());

  // A's agents resend everything they have to B: what A committed comes
  // back as duplicates, the rest (the killed write's batches among them)
  // is stored now.
  auto resent =
      SendConcurrently(connect_to(b->address()), {agents[0], agents[1]});
  int64_t stored_again = 0, duplicates = 0;
  for (int i = 0; i < 2; ++i) {
    const auto& report = resent[i];
    ASSERT_TRUE(report.ok()) << report.status();
    EXPECT_EQ(report->stored + report->duplicate,
              static_cast<int64_t>(agents[i].size()));
    EXPECT_EQ(report->rejected, 0);
    stored_again += report->stored;
    duplicates += report->duplicate;
  }
  EXPECT_GT(stored_again, 0);  // the killed write's batches at least
  EXPECT_GT(duplicates, 0);    // A's four committed writes
  EXPECT_EQ(WEXITSTATUS(b->Terminate()), 0);

  auto store = Store::Open(*location);
  ASSERT_TRUE(store.ok()) << store.status();
  auto catalog = (*store)->LoadCatalog("shared");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(catalog->job.spans, total_spans);
  EXPECT_EQ(catalog->job.ranks, 8);
  EXPECT_EQ(catalog->job.nodes, 4);
  EXPECT_EQ(catalog->processes.size(), 8u);
  auto scanned = CountScannedSpans(**store, catalog->job);
  ASSERT_TRUE(scanned.ok()) << scanned.status();
  EXPECT_EQ(*scanned, total_spans);

  // The killed write's rows are in ClickHouse, and never read.
  auto server = TestClickHouseServer();
  ASSERT_TRUE(server.ok());
  ClickHouseEndpoint endpoint = (*server)->endpoint();
  endpoint.database = location->substr(location->rfind('/') + 1);
  auto client = ClickHouseClient::Connect(endpoint);
  ASSERT_TRUE(client.ok());
  auto rows = (*client)->Query("SELECT sum(count) FROM chunks");
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_GT(std::stoll(*rows), total_spans) << "no uncommitted rows: the "
                                               "kill was not between writes";
  auto batches = (*client)->Query(
      "SELECT count() FROM (SELECT DISTINCT agent, seq FROM batches)");
  ASSERT_TRUE(batches.ok());
  EXPECT_EQ(std::stoll(*batches), total_batches);
}

// Runs `command`; its stdout, and its exit status in *status.
std::string RunCommand(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  *status = pclose(pipe);
  return out;
}

// meridian-collector --migrate-from copies a SQLite store into ClickHouse,
// and a second run stores nothing twice.
TEST(ClickHouseCollectorsTest, MigratesASqliteStoreOnce) {
  auto location = NewStoreLocation(StoreKind::kClickHouse, "migrated");
  if (absl::IsFailedPrecondition(location.status())) {
    GTEST_SKIP() << location.status().message();
  }
  ASSERT_TRUE(location.ok()) << location.status();
  auto sqlite = NewStoreLocation(StoreKind::kSqlite, "to-migrate.db");
  SyntheticJob job;
  job.job = "old job";
  job.ranks = 4;
  job.nodes = 2;
  job.steps = 50;
  int64_t spans = 0;
  {
    auto store = Store::Open(*sqlite);
    ASSERT_TRUE(store.ok()) << store.status();
    for (int node = 0; node < job.nodes; ++node) {
      for (const v1::Batch& b : SyntheticBatches(job, node)) {
        ASSERT_TRUE((*store)->Write({&b}).ok());
        spans += SpanCount(b);
      }
    }
  }
  const std::string command = Runfile("collector/meridian-collector") +
                              " --migrate-from '" + *sqlite + "' --store " +
                              *location;
  int status = 0;
  std::string out = RunCommand(command, &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out, "copied job old job: " + std::to_string(spans) +
                     " spans\ncopied 1 jobs, " + std::to_string(spans) +
                     " spans, 1 batches (0 stored before)\n");
  out = RunCommand(command, &status);
  EXPECT_EQ(status, 0) << out;
  EXPECT_EQ(out,
            "copied job old job: 0 spans\ncopied 1 jobs, 0 spans, 1 "
            "batches (1 stored before)\n");
  auto store = Store::Open(*location);
  ASSERT_TRUE(store.ok());
  auto catalog = (*store)->LoadCatalog("old job");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(catalog->job.spans, spans);
  EXPECT_EQ(catalog->job.ranks, 4);
  // A location with credentials in it is refused, saying why.
  out =
      RunCommand(Runfile("collector/meridian-collector") + " --migrate-from '" +
                     *sqlite + "' --store clickhouse://u:p@127.0.0.1/db 2>&1",
                 &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("carries no user or password"), std::string::npos) << out;
}

}  // namespace
}  // namespace meridian
