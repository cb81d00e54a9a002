// Queries at once against a real collector: together they hold at most its
// --analysis-memory-mib (what each reserves, query/query_costs.h), each
// answers what it answers alone, and one that finds no room within
// --analysis-wait-ms is refused with retry advice while the collector
// serves on and loses nothing.
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "collector/collector.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "meridian/v1/query.grpc.pb.h"
#include "testing/synthetic_job.h"
#include "wire/ingest_client.h"

namespace meridian {
namespace {

std::string Temp(const std::string& name) {
  return std::string(getenv("TEST_TMPDIR")) + "/" + name;
}

// One query of each kind that holds memory, as a client sends it: its
// answer as text, or its error as "CODE: message".
using Query = std::function<std::string(v1::Query::Stub&)>;

std::vector<Query> QueriesOf(const std::string& job) {
  const auto text = [](const grpc::Status& status,
                       const google::protobuf::Message& reply) {
    return status.ok() ? reply.DebugString()
                       : absl::StrCat(status.error_code(), ": ",
                                      status.error_message());
  };
  return {
      [=](v1::Query::Stub& stub) {
        grpc::ClientContext context;
        v1::CriticalPathRequest request;
        request.set_job(job);
        v1::CriticalPathReply reply;
        return text(stub.GetCriticalPath(&context, request, &reply), reply);
      },
      [=](v1::Query::Stub& stub) {
        grpc::ClientContext context;
        v1::StatsRequest request;
        request.mutable_filter()->set_job(job);
        request.set_per_rank(true);
        v1::StatsReply reply;
        return text(stub.GetStats(&context, request, &reply), reply);
      },
      [=](v1::Query::Stub& stub) {
        grpc::ClientContext context;
        v1::StragglersRequest request;
        request.set_job(job);
        v1::StragglersReply reply;
        return text(stub.GetStragglers(&context, request, &reply), reply);
      },
      [=](v1::Query::Stub& stub) {
        grpc::ClientContext context;
        v1::ClocksRequest request;
        request.set_job(job);
        v1::ClocksReply reply;
        grpc::Status status = stub.GetClocks(&context, request, &reply);
        reply.clear_stored();  // whether it was solved or read varies
        reply.clear_solved_ns();
        return text(status, reply);
      },
      [=](v1::Query::Stub& stub) {
        grpc::ClientContext context;
        v1::ExportRequest request;
        request.mutable_filter()->set_job(job);
        auto reader = stub.ExportTrace(&context, request);
        std::string trace;
        v1::TraceChunk chunk;
        while (reader->Read(&chunk)) trace += chunk.data();
        const grpc::Status status = reader->Finish();
        return status.ok() ? trace
                           : absl::StrCat(status.error_code(), ": ",
                                          status.error_message());
      },
      [=](v1::Query::Stub& stub) {
        grpc::ClientContext context;
        v1::ReplayRequest request;
        request.set_job(job);
        v1::ReplayReply reply;
        return text(stub.Replay(&context, request, &reply), reply);
      },
  };
}

struct Fixture {
  std::unique_ptr<Collector> collector;
  std::unique_ptr<v1::Query::Stub> stub;
};

// A collector with `budget` bytes for analyses and `wait` for room, holding
// a 32-rank job of 200 steps (38,432 spans: an analysis of it whole takes
// about 7 MiB).
Fixture Start(const std::string& db, uint64_t budget, absl::Duration wait) {
  CollectorOptions options;
  options.listen = "127.0.0.1:0";
  options.db_path = Temp(db);
  options.analysis_memory_bytes = budget;
  options.analysis_wait = wait;
  options.refresh_after = absl::ZeroDuration();  // no background work
  auto collector = Collector::Start(options);
  EXPECT_TRUE(collector.ok()) << collector.status();
  auto channel = grpc::CreateChannel((*collector)->address(),
                                     grpc::InsecureChannelCredentials());
  SyntheticJob job;
  job.job = "many";
  job.ranks = 32;
  job.nodes = 4;
  job.steps = 200;
  for (int node = 0; node < job.nodes; ++node) {
    auto sent = IngestClient(channel).SendAll(SyntheticBatches(job, node));
    EXPECT_TRUE(sent.ok()) << sent.status();
  }
  return {std::move(*collector), v1::Query::NewStub(channel)};
}

// Runs every query `copies` times at once; their answers, in order.
std::vector<std::string> AllAtOnce(v1::Query::Stub& stub,
                                   const std::vector<Query>& queries,
                                   int copies) {
  std::vector<std::string> answers(queries.size() * copies);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < answers.size(); ++i) {
    threads.emplace_back(
        [&, i] { answers[i] = queries[i % queries.size()](stub); });
  }
  for (std::thread& t : threads) t.join();
  return answers;
}

TEST(ConcurrentQueriesTest, TogetherTheyHoldAtMostTheBudgetAndAnswerAsAlone) {
  // Room for one whole analysis (about 7 MiB) at a time, not two.
  constexpr uint64_t kBudget = uint64_t{12} << 20;
  Fixture f = Start("shared.db", kBudget, absl::Seconds(600));
  const std::vector<Query> queries = QueriesOf("many");
  // Alone, one after another (the first solves the clocks: asked again,
  // they read the same solution).
  std::vector<std::string> alone;
  for (const Query& q : queries) q(*f.stub);
  for (const Query& q : queries) alone.push_back(q(*f.stub));
  for (const std::string& answer : alone) {
    ASSERT_FALSE(absl::StartsWith(answer, "8: ")) << answer;
  }
  const std::vector<std::string> together =
      AllAtOnce(*f.stub, queries, /*copies=*/4);
  for (size_t i = 0; i < together.size(); ++i) {
    EXPECT_EQ(together[i], alone[i % queries.size()]) << "query " << i;
  }
  const AnalysisMemory::Counters c = f.collector->analysis_memory();
  EXPECT_LE(c.peak, kBudget);
  EXPECT_GT(c.peak, uint64_t{7} << 20);  // a whole analysis was held
  EXPECT_EQ(c.refused, 0);
  EXPECT_EQ(c.waiting, 0);
  // Held now: only what is kept (the job's clock state, the last whole
  // analysis), within the budget.
  EXPECT_LE(c.held, kBudget);
}

TEST(ConcurrentQueriesTest, AQueryFindingNoRoomIsRefusedWithRetryAdvice) {
  // No waiting: a query that does not fit beside those running is refused.
  constexpr uint64_t kBudget = uint64_t{12} << 20;
  Fixture f = Start("refused.db", kBudget, absl::ZeroDuration());
  const std::vector<Query> queries = QueriesOf("many");
  for (const Query& q : queries) q(*f.stub);  // clocks solved, stored
  std::vector<std::string> answers = AllAtOnce(*f.stub, queries, 4);
  int refused = 0;
  for (const std::string& answer : answers) {
    if (!absl::StartsWith(answer, "8: ")) continue;  // RESOURCE_EXHAUSTED
    ++refused;
    EXPECT_TRUE(absl::StrContains(answer, " of job many needs about "))
        << answer;
    EXPECT_TRUE(absl::StrContains(
        answer, "; the queries running and what is kept hold "))
        << answer;
    EXPECT_TRUE(absl::EndsWith(
        answer, " (waited 0); retry in a few seconds, or raise the limit"))
        << answer;
  }
  EXPECT_EQ(f.collector->analysis_memory().refused, refused);
  // The collector serves on, with everything stored.
  grpc::ClientContext context;
  v1::ListJobsRequest request;
  v1::ListJobsReply jobs;
  ASSERT_TRUE(f.stub->ListJobs(&context, request, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 1);
  // Its steps' spans and each rank's MPI_Init.
  EXPECT_EQ(jobs.jobs(0).spans(), 32 * 200 * kSyntheticSpansPerStep + 32);
  // And once alone, each query is answered.
  for (const Query& q : queries) {
    EXPECT_FALSE(absl::StartsWith(q(*f.stub), "8: "));
  }
  // Stragglers from summaries that are current read them and load no
  // spans: they reserve nothing, so none is refused, however many at once.
  const std::vector<std::string> read =
      AllAtOnce(*f.stub, {queries[2]}, /*copies=*/8);
  for (const std::string& answer : read) {
    EXPECT_FALSE(absl::StartsWith(answer, "8: ")) << answer;
  }
}

}  // namespace
}  // namespace meridian
