// The collector SIGKILLed at 20 random points of a long ingest, as an agent
// sees it: every batch the collector acknowledged is in the store, and no
// span is stored twice however often a batch is resent.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "meridian/v1/ingest.grpc.pb.h"
#include "store/store.h"
#include "testing/runfile.h"
#include "testing/synthetic_job.h"
#include "testing/test_store.h"
#include "tests/collector_process.h"
#include "wire/batch_spans.h"

namespace meridian {
namespace {

TEST(CrashIngestTest, EveryAckedSpanIsStoredOnceAcrossTwentyKills) {
  const std::string db = std::string(getenv("TEST_TMPDIR")) + "/crash.db";
  SyntheticJob job;
  job.job = "crash";
  job.ranks = 8;
  job.nodes = 4;
  job.steps = 1000;
  job.spans_per_batch = 100;
  // Every node's batches, in the order its agent sends them.
  std::vector<v1::Batch> batches;
  for (int node = 0; node < job.nodes; ++node) {
    for (v1::Batch& b : SyntheticBatches(job, node)) {
      batches.push_back(std::move(b));
    }
  }
  int64_t total_spans = 0;
  for (const v1::Batch& b : batches) total_spans += SpanCount(b);
  ASSERT_EQ(batches.size(), 472u);

  std::mt19937 rng(20261124);
  std::set<size_t> acked;  // batch indexes the collector acknowledged
  int kills = 0;
  int duplicates = 0;  // batches committed before a kill, acked after it
  for (int run = 0; acked.size() < batches.size(); ++run) {
    ASSERT_LT(run, 100) << "no progress";
    auto collector =
        CollectorProcess::Start(Runfile("collector/meridian-collector"), db);
    ASSERT_TRUE(collector.ok()) << collector.status();
    auto channel = grpc::CreateChannel(collector->address(),
                                       grpc::InsecureChannelCredentials());
    auto stub = v1::Ingest::NewStub(channel);
    grpc::ClientContext context;
    auto stream = stub->Stream(&context);
    // Like an agent: everything not yet acknowledged, in order, with a
    // window of 64 in flight; acks come back in order.
    std::vector<size_t> todo;
    for (size_t i = 0; i < batches.size(); ++i) {
      if (!acked.count(i)) todo.push_back(i);
    }
    // Kill after a random number of acks in this run (while later batches
    // are in flight or being committed), 20 times.
    const size_t kill_after =
        kills < 20 ? 1 + rng() % std::min<size_t>(todo.size(), 20) : SIZE_MAX;
    size_t next = 0, answered = 0;
    bool killed = false;
    while (answered < todo.size()) {
      while (next < todo.size() && next - answered < 64) {
        if (!stream->Write(batches[todo[next]])) break;
        ++next;
      }
      v1::Ack ack;
      if (!stream->Read(&ack)) break;
      ASSERT_EQ(ack.batch_seq(), batches[todo[answered]].batch_seq());
      ASSERT_NE(ack.result(), v1::Ack::RESULT_REJECTED) << ack.error();
      if (ack.result() == v1::Ack::RESULT_DUPLICATE) ++duplicates;
      acked.insert(todo[answered]);
      ++answered;
      if (answered == kill_after) {
        collector->Kill();
        killed = true;
        ++kills;
        break;
      }
    }
    context.TryCancel();
    stream->Finish().IgnoreError();
    if (!killed) {
      ASSERT_EQ(WEXITSTATUS(collector->Terminate()), 0);
    }
  }
  EXPECT_EQ(kills, 20);
  RecordProperty("duplicates", duplicates);
  printf("20 kills; %d batches were committed before a kill and resent\n",
         duplicates);

  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok()) << store.status();
  auto catalog = (*store)->LoadCatalog("crash");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  // Every batch once: the job holds each span exactly once.
  EXPECT_EQ(catalog->job.spans, total_spans);
  auto scanned = CountScannedSpans(**store, catalog->job);
  ASSERT_TRUE(scanned.ok()) << scanned.status();
  EXPECT_EQ(*scanned, total_spans);
}

}  // namespace
}  // namespace meridian
