// End to end, with real parts: the meridian-collector binary on a free
// loopback port, concurrent agents streaming over gRPC, the SQLite file, and
// the Query service the CLI uses.
#include <sys/wait.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "meridian/v1/ingest.grpc.pb.h"
#include "meridian/v1/query.grpc.pb.h"
#include "store/store.h"
#include "testing/runfile.h"
#include "testing/scenario_job.h"
#include "testing/synthetic_job.h"
#include "testing/test_store.h"
#include "tests/collector_process.h"
#include "wire/batch_builder.h"
#include "wire/ingest_client.h"

namespace meridian {
namespace {

constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;

// Channels of their own, so that a released channel closes its connection
// (and the collector's shutdown need not wait for it).
std::shared_ptr<grpc::Channel> Connect(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(),
                                   args);
}

class IntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // SQLite, or ClickHouse in integration_test_clickhouse.
    auto location =
        NewStoreLocation(StoreKindFromEnvironment(), "integration.db");
    ASSERT_TRUE(location.ok()) << location.status();
    db_path_ = *location;
    auto collector = CollectorProcess::Start(
        Runfile("collector/meridian-collector"), db_path_);
    ASSERT_TRUE(collector.ok()) << collector.status();
    collector_.emplace(std::move(*collector));
    channel_ = Connect(collector_->address());
    query_ = v1::Query::NewStub(channel_);
  }

  // Sends the synthetic job from one concurrent agent per node; the agent
  // of node `resender` sends every batch twice.
  void SendSyntheticJob(const SyntheticJob& job, int resender) {
    std::vector<std::vector<v1::Batch>> nodes;
    std::vector<int> passes;
    for (int node = 0; node < job.nodes; ++node) {
      nodes.push_back(SyntheticBatches(job, node));
      passes.push_back(node == resender ? 2 : 1);
    }
    auto reports = SendConcurrently(
        [this] { return Connect(collector_->address()); }, nodes, passes);
    for (int node = 0; node < job.nodes; ++node) {
      ASSERT_TRUE(reports[node].ok()) << reports[node].status();
      const int64_t batches = nodes[node].size();
      EXPECT_EQ(reports[node]->stored, batches);
      EXPECT_EQ(reports[node]->duplicate, node == resender ? batches : 0);
      EXPECT_EQ(reports[node]->rejected, 0);
    }
  }

  grpc::Status Export(const v1::SpanFilter& filter, std::string* json) {
    grpc::ClientContext context;
    v1::ExportRequest request;
    *request.mutable_filter() = filter;
    auto reader = query_->ExportTrace(&context, request);
    v1::TraceChunk chunk;
    json->clear();
    while (reader->Read(&chunk)) *json += chunk.data();
    return reader->Finish();
  }

  std::string db_path_;
  std::optional<CollectorProcess> collector_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Query::Stub> query_;
};

SyntheticJob SixRanks() {
  SyntheticJob job;
  job.job = "six";
  job.ranks = 6;
  job.nodes = 3;
  job.steps = 20;
  job.spans_per_batch = 50;
  return job;
}

TEST_F(IntegrationTest, ConcurrentAgentsResendsStatsAndExportAreExact) {
  const SyntheticJob job = SixRanks();
  SendSyntheticJob(job, /*resender=*/2);
  const int64_t spans = job.ranks * (1 + kSyntheticSpansPerStep * job.steps);

  {  // jobs
    grpc::ClientContext context;
    v1::ListJobsReply reply;
    ASSERT_TRUE(query_->ListJobs(&context, {}, &reply).ok());
    ASSERT_EQ(reply.jobs_size(), 1);
    EXPECT_EQ(reply.jobs(0).job(), "six");
    EXPECT_EQ(reply.jobs(0).ranks(), 6);
    EXPECT_EQ(reply.jobs(0).nodes(), 3);
    EXPECT_EQ(reply.jobs(0).spans(), spans);
    EXPECT_EQ(reply.jobs(0).start_ns(), job.t0_ns - kMs);
    EXPECT_EQ(reply.jobs(0).end_ns(), job.t0_ns + 199 * kMs);
  }

  {  // stats, against the generator's formula
    grpc::ClientContext context;
    v1::StatsRequest request;
    request.mutable_filter()->set_job("six");
    v1::StatsReply stats;
    grpc::Status status = query_->GetStats(&context, request, &stats);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(stats.elapsed_ns(), 200 * kMs);
    ASSERT_EQ(stats.ops_size(), 2);
    const v1::OpStats& allreduce = stats.ops(0);
    EXPECT_EQ(allreduce.name(), "MPI_Allreduce");
    EXPECT_EQ(allreduce.calls(), 2 * 20 * 6);
    EXPECT_EQ(allreduce.bytes(), 20 * 6 * (8 + (4 << 20)));
    // sum over r of 20 * (20 us + r us + 1 ms + 10 r us), r = 0..5
    EXPECT_EQ(allreduce.dur_ns(), 20 * (6 * 1020 * kUs + 15 * 11 * kUs));
    ASSERT_EQ(allreduce.buckets_size(), 2);
    EXPECT_EQ(allreduce.buckets(0).log2(), 3);
    EXPECT_EQ(allreduce.buckets(0).calls(), 120);
    EXPECT_EQ(allreduce.buckets(1).log2(), 22);
    EXPECT_EQ(allreduce.buckets(1).bytes(), 120 * (4 << 20));
    const v1::OpStats& bcast = stats.ops(1);
    EXPECT_EQ(bcast.name(), "MPI_Bcast");
    EXPECT_EQ(bcast.calls(), 6);
    EXPECT_EQ(bcast.bytes(), 6000);
    EXPECT_EQ(bcast.dur_ns(), 600 * kUs);
    EXPECT_EQ(bcast.buckets(0).log2(), 9);
    ASSERT_EQ(stats.ranks_size(), 6);
    for (int r = 0; r < 6; ++r) {
      EXPECT_EQ(stats.ranks(r).rank(), r);
      EXPECT_EQ(stats.ranks(r).host(), "node-" + std::to_string(r / 2));
      EXPECT_EQ(stats.ranks(r).calls(), 41);
      EXPECT_EQ(stats.ranks(r).comm_ns(),
                20 * (1020 + 11 * r) * kUs + 100 * kUs);
      EXPECT_EQ(stats.ranks(r).elapsed_ns(), 200 * kMs);
    }
    EXPECT_EQ(stats.min_comm_rank(), 0);
    EXPECT_EQ(stats.median_comm_rank(), 2);
    EXPECT_EQ(stats.max_comm_rank(), 5);
  }

  {  // the whole merged trace
    std::string json;
    v1::SpanFilter filter;
    filter.set_job("six");
    ASSERT_TRUE(Export(filter, &json).ok());
    google::protobuf::Struct trace;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &trace).ok())
        << json.substr(0, 500);
    const auto& events = trace.fields().at("traceEvents").list_value();
    const int metadata = 6 * 2 + 6 * 2;  // per rank and per track: name, sort
    ASSERT_EQ(events.values_size(), metadata + spans);
    EXPECT_EQ(events.values(0).struct_value().fields().at("ph").string_value(),
              "M");
    double last_ts = -1;
    int allreduces = 0;
    std::vector<int> per_rank(6, 0);
    for (int i = metadata; i < events.values_size(); ++i) {
      const auto& e = events.values(i).struct_value().fields();
      EXPECT_EQ(e.at("ph").string_value(), "X");
      double ts = e.at("ts").number_value();
      EXPECT_GE(ts, last_ts) << "event " << i << " is out of time order";
      last_ts = ts;
      if (e.at("name").string_value() == "MPI_Allreduce") ++allreduces;
      ++per_rank[static_cast<int>(e.at("pid").number_value()) - 1];
    }
    EXPECT_EQ(allreduces, 240);
    for (int count : per_rank) EXPECT_EQ(count, 121);
    const auto& first = events.values(metadata).struct_value().fields();
    EXPECT_EQ(first.at("name").string_value(), "MPI_Bcast");
    EXPECT_EQ(first.at("ts").number_value(), 0);
    EXPECT_EQ(first.at("dur").number_value(), 100);
    EXPECT_EQ(trace.fields()
                  .at("otherData")
                  .struct_value()
                  .fields()
                  .at("epoch_ns")
                  .number_value(),
              static_cast<double>(job.t0_ns - kMs));
  }

  {  // filters: rank 3, steps 5..6, MPI only
    std::string json;
    v1::SpanFilter filter;
    filter.set_job("six");
    filter.add_ranks(3);
    filter.set_first_step(5);
    filter.set_last_step(6);
    filter.add_categories(v1::CATEGORY_MPI);
    ASSERT_TRUE(Export(filter, &json).ok());
    google::protobuf::Struct trace;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &trace).ok());
    const auto& events = trace.fields().at("traceEvents").list_value();
    ASSERT_EQ(events.values_size(), 4 + 4);  // metadata of rank 3, 2 x 2 MPI
    const auto& e = events.values(4).struct_value().fields();
    EXPECT_EQ(e.at("pid").number_value(), 4);  // rank 3
    // step 5 starts 51 ms after the job's first span; the 8-byte allreduce
    // 7 ms later.
    EXPECT_EQ(e.at("ts").number_value(), 58000);
    EXPECT_EQ(e.at("dur").number_value(), 23);
    EXPECT_EQ(e.at("args").struct_value().fields().at("seq").number_value(),
              11);
  }
}

// A bad record costs only itself; a batch whose structure is broken is
// refused whole, with a clear error; nothing stored changes.
TEST_F(IntegrationTest, BadInputCostsOnlyItselfAndNothingStoredChanges) {
  const SyntheticJob job = SixRanks();
  SendSyntheticJob(job, /*resender=*/-1);

  BatchBuilder builder("probe-agent");
  int p = builder.DeclareProcess({"bad-input", "host", 0, 0, 1});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  builder.AddSpan(t, v1::CATEGORY_USER, "ok", job.t0_ns, 10);
  v1::Batch good = builder.Take();
  builder.AddSpan(t, v1::CATEGORY_USER, "negative", job.t0_ns, -1);
  builder.AddSpan(t, v1::CATEGORY_USER, "kept", job.t0_ns + 2, 10);
  v1::Batch negative = builder.Take();
  const std::string awkward = "\"quoted\"\nline'); DROP TABLE spans;--";
  builder.AddSpan(t, v1::CATEGORY_USER, awkward, job.t0_ns + 5, 10);
  v1::Batch sql = builder.Take();
  builder.AddSpan(t, v1::CATEGORY_USER, "absurd", 42, 10);
  v1::Batch absurd = builder.Take();
  absurd.mutable_spans(0)->set_track(9);
  // A name cut inside a character (before: the batch did not parse, and the
  // agent resent it for ever).
  builder.AddSpan(t, v1::CATEGORY_USER, "cut", job.t0_ns + 7, 10);
  v1::Batch cut = builder.Take();
  cut.set_strings(cut.spans(0).name(), "cut\xE2\x82");

  auto ingest = v1::Ingest::NewStub(channel_);
  std::vector<v1::Ack> acks;
  {
    grpc::ClientContext context;
    auto stream = ingest->Stream(&context);
    for (const v1::Batch* batch : {&good, &negative, &sql, &absurd, &cut}) {
      ASSERT_TRUE(stream->Write(*batch));
    }
    stream->WritesDone();
    v1::Ack ack;
    while (stream->Read(&ack)) acks.push_back(ack);
    ASSERT_TRUE(stream->Finish().ok());
  }
  ASSERT_EQ(acks.size(), 5u);
  EXPECT_EQ(acks[0].result(), v1::Ack::RESULT_STORED);
  EXPECT_EQ(acks[1].result(), v1::Ack::RESULT_STORED);
  EXPECT_EQ(acks[1].batch_seq(), 2u);
  EXPECT_EQ(acks[1].spans_stored(), 1u);
  EXPECT_EQ(acks[1].spans_invalid(), 1u);
  EXPECT_EQ(acks[1].error(),
            "span 0 (\"negative\"): dur_ns is -1; durations must be >= 0");
  EXPECT_EQ(acks[2].result(), v1::Ack::RESULT_STORED);
  EXPECT_EQ(acks[3].result(), v1::Ack::RESULT_REJECTED);
  EXPECT_EQ(acks[3].error(),
            "batch 4 from agent \"probe-agent\": span 0: track index 9 is out "
            "of range; the batch has 1 tracks");
  EXPECT_EQ(acks[4].result(), v1::Ack::RESULT_STORED);
  EXPECT_EQ(acks[4].spans_stored(), 1u);

  // An oversized message: refused by gRPC, the collector keeps serving.
  {
    v1::Batch huge = good;
    huge.set_batch_seq(100);
    huge.add_strings(std::string(65 << 20, 'x'));
    grpc::ClientContext huge_context;
    auto huge_stream = ingest->Stream(&huge_context);
    huge_stream->Write(huge);
    huge_stream->WritesDone();
    v1::Ack none;
    EXPECT_FALSE(huge_stream->Read(&none));
    EXPECT_EQ(huge_stream->Finish().error_code(),
              grpc::StatusCode::RESOURCE_EXHAUSTED);
  }

  // Bytes that are no protobuf at all.
  {
    grpc::GenericStub generic(channel_);
    grpc::CompletionQueue cq;
    grpc::ClientContext raw_context;
    auto call =
        generic.PrepareCall(&raw_context, "/meridian.v1.Ingest/Stream", &cq);
    void* tag;
    bool ok;
    auto next = [&] { return cq.Next(&tag, &ok) && ok; };
    call->StartCall(reinterpret_cast<void*>(1));
    ASSERT_TRUE(next());
    grpc::Slice slice(std::string("\xff\xff\xff\xff garbage", 12));
    grpc::ByteBuffer garbage(&slice, 1);
    call->Write(garbage, reinterpret_cast<void*>(2));
    next();
    call->WritesDone(reinterpret_cast<void*>(3));
    next();
    // Garbage is answered, refused unparsed (before: no ack at all, and an
    // agent resent it for ever).
    grpc::ByteBuffer reply;
    call->Read(&reply, reinterpret_cast<void*>(4));
    ASSERT_TRUE(next());
    grpc::Slice answer;
    ASSERT_TRUE(reply.DumpToSingleSlice(&answer).ok());
    v1::Ack refused;
    ASSERT_TRUE(refused.ParseFromArray(answer.begin(),
                                       static_cast<int>(answer.size())));
    EXPECT_EQ(refused.result(), v1::Ack::RESULT_REJECTED);
    EXPECT_TRUE(absl::EndsWith(refused.error(),
                               " was refused unparsed: the batch is not a "
                               "well-formed protocol buffer"))
        << refused.error();
    grpc::Status status;
    call->Finish(&status, reinterpret_cast<void*>(5));
    cq.Next(&tag, &ok);
    cq.Shutdown();
    while (cq.Next(&tag, &ok)) {
    }
  }

  // Unknown jobs and bad filters: clear errors.
  {
    grpc::ClientContext unknown_context;
    v1::StatsRequest request;
    request.mutable_filter()->set_job("nope");
    v1::StatsReply reply;
    grpc::Status status = query_->GetStats(&unknown_context, request, &reply);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(status.error_message(),
              "no job \"nope\" in the collector's store (`meridian jobs` lists "
              "the stored jobs)");
    grpc::ClientContext steps_context;
    request.mutable_filter()->set_job("six");
    request.mutable_filter()->set_first_step(5);
    request.mutable_filter()->set_last_step(2);
    status = query_->GetStats(&steps_context, request, &reply);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(status.error_message(),
              "step range 5:2 is empty; write FIRST:LAST with FIRST <= LAST");
  }

  // The collector still serves; what was stored is intact; the awkward name
  // comes back verbatim, escaped in the trace.
  std::string json;
  v1::SpanFilter filter;
  filter.set_job("bad-input");
  ASSERT_TRUE(Export(filter, &json).ok());
  google::protobuf::Struct trace;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &trace).ok());
  const auto& events = trace.fields().at("traceEvents").list_value();
  ASSERT_EQ(events.values_size(), 4 + 4);
  EXPECT_EQ(events.values(5).struct_value().fields().at("name").string_value(),
            "kept");
  EXPECT_EQ(events.values(6).struct_value().fields().at("name").string_value(),
            awkward);
  EXPECT_EQ(events.values(7).struct_value().fields().at("name").string_value(),
            "cut\xEF\xBF\xBD");

  // Connections closed first: the collector's shutdown waits (up to its
  // grace period) for connected clients.
  query_.reset();
  ingest.reset();
  channel_.reset();
  ASSERT_EQ(WEXITSTATUS(collector_->Terminate()), 0);
  auto store = Store::Open(db_path_);
  ASSERT_TRUE(store.ok());
  auto jobs = (*store)->ListJobs();
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].name, "bad-input");
  EXPECT_EQ((*jobs)[0].spans, 4);
  EXPECT_EQ((*jobs)[1].spans, 6 * (1 + kSyntheticSpansPerStep * 20));
}

// A collector serving at most one ingest stream: a second is told at once
// to retry later (RESOURCE_EXHAUSTED with retry-after-ms), and the agent's
// client reads how long; once the first ends, sending works again and
// nothing is lost.
TEST(IngestLimitsTest, StreamsBeyondTheCapAreToldToRetryLater) {
  auto location = NewStoreLocation(StoreKindFromEnvironment(), "capped.db");
  ASSERT_TRUE(location.ok()) << location.status();
  const std::string db = *location;
  auto collector =
      CollectorProcess::Start(Runfile("collector/meridian-collector"), db,
                              "127.0.0.1:0", {"--max-streams", "1"});
  ASSERT_TRUE(collector.ok()) << collector.status();
  auto channel = Connect(collector->address());
  auto ingest = v1::Ingest::NewStub(channel);
  BatchBuilder builder("holder");
  int p = builder.DeclareProcess({"capped", "host", 0, 0, 1});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  builder.AddSpan(t, v1::CATEGORY_USER, "held", 1700000000000000000, 10);
  const v1::Batch held = builder.Take();

  grpc::ClientContext first_context;
  auto first = ingest->Stream(&first_context);
  ASSERT_TRUE(first->Write(held));
  v1::Ack ack;
  ASSERT_TRUE(first->Read(&ack));  // the stream is being served
  EXPECT_EQ(ack.result(), v1::Ack::RESULT_STORED);

  grpc::ClientContext second_context;
  auto second = ingest->Stream(&second_context);
  second->WritesDone();
  EXPECT_FALSE(second->Read(&ack));
  grpc::Status refused = second->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(refused.error_message(),
            "the collector serves at most 1 ingest streams at once; retry in "
            "1000 ms (unacknowledged batches are resent)");
  const auto& trailers = second_context.GetServerTrailingMetadata();
  ASSERT_EQ(trailers.count("retry-after-ms"), 1u);
  EXPECT_EQ(std::string(trailers.find("retry-after-ms")->second.data(),
                        trailers.find("retry-after-ms")->second.size()),
            "1000");

  IngestClient client(channel);
  SendOptions once;
  once.max_streams = 1;
  EXPECT_FALSE(client.SendAll({held}, once).ok());
  EXPECT_EQ(client.retry_after_ms(), 1000);

  first->WritesDone();
  EXPECT_FALSE(first->Read(&ack));
  ASSERT_TRUE(first->Finish().ok());
  auto sent = client.SendAll({held}, once);
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_EQ(sent->duplicate, 1);  // stored once, on the first stream
  EXPECT_EQ(client.retry_after_ms(), 0);
  ASSERT_EQ(WEXITSTATUS(collector->Terminate()), 0);
}

// Two nodes whose clocks are 1 ms ahead and 2 ms behind the collector's,
// as their clock models say: raw, rank 1 leaves a barrier 2.8 ms before
// rank 0 enters it; on the collector's clock the trace is the true one.
TEST_F(IntegrationTest, ClockModelsPutEveryNodeOnTheCollectorsClock) {
  constexpr int64_t kT = 1700000000000000000;
  const int64_t offsets[] = {1 * kMs, -2 * kMs};
  std::vector<v1::Batch> batches;
  for (int node = 0; node < 2; ++node) {
    const std::string name = node == 0 ? "a" : "b";
    BatchBuilder builder("agent-" + name);
    const int p = builder.DeclareProcess({"clocked", name, node, 0, 10 + node});
    const int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
    const int64_t offset = offsets[node];
    if (node == 0) {
      builder.AddSpan(t, v1::CATEGORY_USER, "step", kT + offset, 400 * kUs);
    }
    // True times: rank 0 in the barrier from 100 to 300 us, rank 1 from 250.
    const int64_t enter = node == 0 ? 100 * kUs : 250 * kUs;
    v1::Span* barrier = builder.AddSpan(t, v1::CATEGORY_MPI, "MPI_Barrier",
                                        kT + enter + offset, 300 * kUs - enter);
    barrier->set_comm(1);
    barrier->set_comm_size(2);
    barrier->set_seq(0);
    const uint32_t node_index = builder.String(name);
    batches.push_back(builder.Take());
    v1::ClockModel* clock = batches.back().mutable_clock();
    clock->set_node(node_index);
    clock->set_reference_ns(kT);
    clock->set_offset_ns(offset);
    clock->set_uncertainty_ns(5 * kUs);
  }
  IngestClient ingest(channel_);
  auto sent = ingest.SendAll(batches);
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_EQ(sent->stored, 2);

  // (name, rank) -> (ts, dur) in us, of the exported trace.
  using Events =
      std::map<std::pair<std::string, int>, std::pair<double, double>>;
  auto events = [&](bool raw) {
    grpc::ClientContext context;
    v1::ExportRequest request;
    request.mutable_filter()->set_job("clocked");
    request.set_raw_clock(raw);
    auto reader = query_->ExportTrace(&context, request);
    v1::TraceChunk chunk;
    std::string json;
    while (reader->Read(&chunk)) json += chunk.data();
    EXPECT_TRUE(reader->Finish().ok());
    google::protobuf::Struct trace;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &trace).ok());
    Events out;
    for (const auto& v :
         trace.fields().at("traceEvents").list_value().values()) {
      const auto& e = v.struct_value().fields();
      if (e.at("ph").string_value() == "M") continue;
      out[{e.at("name").string_value(),
           static_cast<int>(e.at("pid").number_value()) - 1}] = {
          e.at("ts").number_value(), e.at("dur").number_value()};
    }
    return out;
  };
  EXPECT_EQ(events(false), (Events{{{"step", 0}, {0, 400}},
                                   {{"MPI_Barrier", 0}, {100, 200}},
                                   {{"MPI_Barrier", 1}, {250, 50}}}));
  // Raw: rank 1's times are 3 ms earlier than rank 0's.
  EXPECT_EQ(events(true), (Events{{{"step", 0}, {2750, 400}},
                                  {{"MPI_Barrier", 0}, {2850, 200}},
                                  {{"MPI_Barrier", 1}, {0, 50}}}));

  grpc::ClientContext context;
  v1::ClocksRequest request;
  request.set_job("clocked");
  v1::ClocksReply clocks;
  ASSERT_TRUE(query_->GetClocks(&context, request, &clocks).ok());
  ASSERT_EQ(clocks.nodes_size(), 2);
  EXPECT_EQ(clocks.nodes(0).node(), "a");
  EXPECT_EQ(clocks.nodes(0).offset_ns(), 1 * kMs);
  EXPECT_EQ(clocks.nodes(1).node(), "b");
  EXPECT_EQ(clocks.nodes(1).offset_ns(), -2 * kMs);
  EXPECT_EQ(clocks.nodes(1).models(), 1);
  EXPECT_EQ(clocks.nodes(1).uncertainty_ns(), 5 * kUs);
  EXPECT_EQ(clocks.nodes(1).correction_ns(), 0);
  // Its one model, as a point of the timeline the web page charts.
  ASSERT_EQ(clocks.nodes(1).timeline_size(), 1);
  EXPECT_EQ(clocks.nodes(1).timeline(0).offset_ns(), -2 * kMs);
  EXPECT_EQ(clocks.nodes(1).timeline(0).uncertainty_ns(), 5 * kUs);
  EXPECT_EQ(clocks.constraints(), 2);
  EXPECT_EQ(clocks.violations_before(), 0);
  EXPECT_EQ(clocks.violations_after(), 0);
  EXPECT_TRUE(clocks.refined());

  grpc::ClientContext unknown_context;
  request.set_job("nope");
  grpc::Status status = query_->GetClocks(&unknown_context, request, &clocks);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(),
            "no job \"nope\" in the collector's store (`meridian jobs` lists "
            "the stored jobs)");
}

TEST_F(IntegrationTest, AnalysesOverRpcUseTheCollectorsClock) {
  // Node 1 (ranks 2 and 3) reads 4 ms behind: on raw clocks its slow rank
  // 2 would seem to arrive first. Its clock model undoes that.
  for (const auto& node : ScenarioBatches("slow-rank", "skewed", -4 * kMs)) {
    IngestClient ingest(Connect(collector_->address()));
    auto sent = ingest.SendAll(node);
    ASSERT_TRUE(sent.ok()) << sent.status();
    ASSERT_EQ(sent->stored, 1);
  }
  {
    grpc::ClientContext context;
    v1::CriticalPathRequest request;
    request.set_job("skewed");
    request.set_step(2);
    v1::CriticalPathReply path;
    grpc::Status status = query_->GetCriticalPath(&context, request, &path);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(path.job(), "skewed");
    EXPECT_EQ(path.step(), 2);
    EXPECT_EQ(path.start_ns(), kScenarioT0 + 20 * kMs);
    EXPECT_EQ(path.dur_ns(), 5100 * kUs);
    ASSERT_EQ(path.segments_size(), 2);
    EXPECT_EQ(path.segments(0).rank(), 2);
    EXPECT_EQ(path.segments(0).name(), "forward");
    EXPECT_EQ(path.segments(0).start_ns(), kScenarioT0 + 20 * kMs);
    EXPECT_EQ(path.segments(0).dur_ns(), 5 * kMs);
    EXPECT_EQ(path.segments(1).rank(), 0);
    EXPECT_EQ(path.segments(1).name(), "MPI_Allreduce");
    EXPECT_EQ(path.segments(1).dur_ns(), 100 * kUs);
  }
  {
    grpc::ClientContext context;
    v1::StragglersRequest request;
    request.set_job("skewed");
    request.set_head(1);
    v1::StragglersReply reply;
    ASSERT_TRUE(query_->GetStragglers(&context, request, &reply).ok());
    ASSERT_EQ(reply.collectives_size(), 1);
    EXPECT_EQ(reply.collectives(0).skew_ns(), 2 * kMs);
    EXPECT_EQ(reply.collectives(0).last_rank(), 2);
    ASSERT_EQ(reply.ranks_size(), 4);
    EXPECT_EQ(reply.ranks(0).rank(), 2);
    EXPECT_EQ(reply.ranks(0).wait_ns(), 24 * kMs);
  }
  {
    grpc::ClientContext context;
    v1::StepsRequest request;
    request.set_job("skewed");
    v1::StepsReply reply;
    ASSERT_TRUE(query_->GetSteps(&context, request, &reply).ok());
    ASSERT_EQ(reply.steps_size(), 4);
    EXPECT_EQ(reply.steps(3).start_ns(), kScenarioT0 + 30 * kMs);
    EXPECT_EQ(reply.steps(3).dur_ns(), 5100 * kUs);
    EXPECT_EQ(reply.steps(3).overlap_ns(), kMs);
  }
  {
    grpc::ClientContext context;
    v1::GraphRequest request;
    request.set_job("skewed");
    request.set_step(0);
    request.set_format(v1::GRAPH_FORMAT_GRAPHML);
    auto reader = query_->ExportGraph(&context, request);
    v1::TraceChunk chunk;
    std::string graphml;
    while (reader->Read(&chunk)) graphml += chunk.data();
    ASSERT_TRUE(reader->Finish().ok());
    EXPECT_NE(graphml.find("<graphml"), std::string::npos);
  }

  // Bad requests: a clear error each, and the service and the store go on.
  auto code_of = [](const grpc::Status& s) { return s.error_code(); };
  {
    grpc::ClientContext context;
    v1::CriticalPathRequest request;
    request.set_job("nope");
    v1::CriticalPathReply reply;
    grpc::Status s = query_->GetCriticalPath(&context, request, &reply);
    EXPECT_EQ(code_of(s), grpc::StatusCode::NOT_FOUND);
    EXPECT_NE(s.error_message().find("no job \"nope\""), std::string::npos)
        << s.error_message();
  }
  {
    grpc::ClientContext context;
    v1::StragglersRequest request;
    request.set_job("skewed");
    request.set_head(-1);
    v1::StragglersReply reply;
    EXPECT_EQ(code_of(query_->GetStragglers(&context, request, &reply)),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  {
    grpc::ClientContext context;
    v1::CompareRequest request;
    request.set_job_a("skewed");
    request.add_ranks(1);
    v1::CompareReply reply;
    grpc::Status s = query_->Compare(&context, request, &reply);
    EXPECT_EQ(code_of(s), grpc::StatusCode::INVALID_ARGUMENT);
  }
  {
    grpc::ClientContext context;
    v1::CompareRequest request;
    request.set_job_a("skewed");
    request.add_ranks(0);
    request.add_ranks(2);
    v1::CompareReply reply;
    ASSERT_TRUE(query_->Compare(&context, request, &reply).ok());
    EXPECT_EQ(reply.a(), "job skewed rank 0");
    // Equal |diff| (8 ms): by category, then name; "step" differs by 0.
    ASSERT_EQ(reply.ops_size(), 3);
    EXPECT_EQ(reply.ops(0).name(), "MPI_Allreduce");
    EXPECT_EQ(reply.ops(0).diff().dur_ns(), -8 * kMs);
    EXPECT_EQ(reply.ops(1).name(), "forward");
    EXPECT_EQ(reply.ops(1).diff().dur_ns(), 8 * kMs);
    EXPECT_EQ(reply.ops(2).name(), "step");
    EXPECT_EQ(reply.ops(2).diff().dur_ns(), 0);
  }
  grpc::ClientContext context;
  v1::ListJobsReply jobs;
  ASSERT_TRUE(query_->ListJobs(&context, {}, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 1);
  EXPECT_EQ(jobs.jobs(0).spans(), 64);
}

}  // namespace
}  // namespace meridian
