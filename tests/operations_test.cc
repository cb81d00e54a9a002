// Operating the daemons: Prometheus /metrics of the collector and the
// agent, gRPC health checking and reflection, over real sockets.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "abi/agent_protocol.h"
#include "abi/process_region.h"
#include "abi/span_ring.h"
#include "absl/strings/match.h"
#include "agent/node_agent.h"
#include "collector/collector.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "meridian/v1/query.grpc.pb.h"
#include "testing/synthetic_job.h"
#include "wire/batch_builder.h"
#include "wire/ingest_client.h"

namespace meridian {
namespace {

std::string Temp(const std::string& name) {
  return std::string(getenv("TEST_TMPDIR")) + "/" + name;
}

// GET /metrics from 127.0.0.1:`port`: the response body.
std::string Scrape(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)),
            0);
  const std::string request =
      "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n";
  EXPECT_EQ(write(fd, request.data(), request.size()),
            static_cast<ssize_t>(request.size()));
  std::string response;
  char buffer[4096];
  ssize_t n;
  while ((n = read(fd, buffer, sizeof(buffer))) > 0) response.append(buffer, n);
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? response : response.substr(body + 4);
}

// Whether `text` has the exact line `line`.
bool HasLine(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

// One unary or streaming call by name with raw bytes; the first response.
std::string RawCall(const std::shared_ptr<grpc::Channel>& channel,
                    const std::string& method, const std::string& request) {
  grpc::GenericStub generic(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext context;
  auto call = generic.PrepareCall(&context, method, &cq);
  void* tag;
  bool ok;
  call->StartCall(reinterpret_cast<void*>(1));
  cq.Next(&tag, &ok);
  grpc::Slice slice(request);
  grpc::ByteBuffer message(&slice, 1);
  call->Write(message, reinterpret_cast<void*>(2));
  cq.Next(&tag, &ok);
  call->WritesDone(reinterpret_cast<void*>(3));
  cq.Next(&tag, &ok);
  grpc::ByteBuffer reply;
  call->Read(&reply, reinterpret_cast<void*>(4));
  cq.Next(&tag, &ok);
  std::string out;
  if (ok) {
    std::vector<grpc::Slice> slices;
    (void)reply.Dump(&slices);
    for (const grpc::Slice& s : slices) {
      out.append(reinterpret_cast<const char*>(s.begin()), s.size());
    }
  }
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return out;
}

TEST(OperationsTest, CollectorMetricsHealthAndReflection) {
  CollectorOptions options;
  options.listen = "127.0.0.1:0";
  options.db_path = Temp("ops.db");
  options.metrics = "127.0.0.1:0";
  auto collector = Collector::Start(options);
  ASSERT_TRUE(collector.ok()) << collector.status();
  ASSERT_NE((*collector)->metrics_port(), 0);
  auto channel = grpc::CreateChannel((*collector)->address(),
                                     grpc::InsecureChannelCredentials());
  BatchBuilder builder("ops-agent");
  int p = builder.DeclareProcess({"ops-job", "host", 0, 0, 1});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  builder.AddSpan(t, v1::CATEGORY_USER, "step", 1700000000000000000, 10);
  builder.AddSpan(t, v1::CATEGORY_USER, "bad", 1700000000000000000, -1);
  auto sent = IngestClient(channel).SendAll({builder.Take()});
  ASSERT_TRUE(sent.ok()) << sent.status();

  const std::string metrics = Scrape((*collector)->metrics_port());
  EXPECT_TRUE(
      HasLine(metrics, "meridian_collector_batches_total{result=\"stored\"} 1"))
      << metrics;
  EXPECT_TRUE(HasLine(metrics, "meridian_collector_spans_stored_total 1"));
  EXPECT_TRUE(HasLine(metrics, "meridian_collector_spans_invalid_total 1"));
  EXPECT_TRUE(HasLine(metrics,
                      "meridian_collector_job_spans_total{job=\"ops-job\"} 1"));
  EXPECT_TRUE(HasLine(metrics, "meridian_collector_commit_seconds_count 1"));
  EXPECT_TRUE(HasLine(metrics, "meridian_collector_write_queue_bytes 0"));

  // grpc.health.v1.Health/Check {service: ""}: status SERVING (1).
  EXPECT_EQ(RawCall(channel, "/grpc.health.v1.Health/Check", ""),
            std::string("\x08\x01", 2));
  // Reflection: list_services (field 7) names the collector's services.
  const std::string services = RawCall(
      channel, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      std::string("\x3a\x00", 2));
  for (const char* service : {"meridian.v1.Ingest", "meridian.v1.Query",
                              "meridian.v1.Control", "meridian.v1.Clock"}) {
    EXPECT_NE(services.find(service), std::string::npos) << service;
  }
}

// A directory under /tmp: a short socket path.
std::string ShortTempDir() {
  char dir[] = "/tmp/meridian-ops-XXXXXX";
  return mkdtemp(dir);
}

// An agent in `base` with metrics, whose collector is not there: it spools.
NodeAgentOptions SpoolingAgent(const std::string& base) {
  NodeAgentOptions options;
  options.collector = "127.0.0.1:1";
  options.socket = base + "/agent/agent.sock";
  options.spool_dir = base + "/agent/spool";
  options.metrics = "127.0.0.1:0";
  return options;
}

TEST(OperationsTest, AgentMetrics) {
  const std::string base = ShortTempDir();
  const NodeAgentOptions options = SpoolingAgent(base);
  auto agent = NodeAgent::Start(options);
  ASSERT_TRUE(agent.ok()) << agent.status();
  const std::string metrics = Scrape((*agent)->metrics_port());
  EXPECT_TRUE(
      HasLine(metrics, "meridian_agent_spans_total{state=\"received\"} 0"))
      << metrics;
  EXPECT_TRUE(HasLine(metrics, "meridian_agent_spool_bytes 0"));
  EXPECT_TRUE(HasLine(metrics, "meridian_agent_connections 0"));
  agent->reset();
  (void)!system(("rm -rf " + base).c_str());
}

// A traced process (this test, acting as its probe: a sealed memfd region
// handed over the agent's socket) writes 2 good records and 3 naming a
// string it never published: the agent counts the 3 under the process, in
// --status's reply and in the metrics, while it runs and after it ended.
// Sends `request` on a new connection to the agent at `socket`; its reply.
template <typename Request>
FlushReply Ask(const std::string& socket, const Request& request) {
  FlushReply reply;
  const int fd = ConnectAgent(socket.c_str());
  EXPECT_TRUE(SendMessage(fd, &request, sizeof(request), -1));
  EXPECT_EQ(ReceiveMessage(fd, &reply, sizeof(reply), nullptr),
            static_cast<long>(sizeof(reply)));
  close(fd);
  return reply;
}

FlushReply AskAgent(const std::string& socket) {
  FlushRequest request;
  request.timeout_ms = 10000;
  return Ask(socket, request);
}

// This test acting as a traced process's probe: a sealed memfd region with
// one ring holding a record per entry of `published` (true: naming a
// string it published, "work"; false: an index it never published),
// handed to the agent at `socket` under `job` as process `pid`.
class FakeProbe {
 public:
  FakeProbe(const std::string& socket, const char* job, int64_t pid,
            const std::vector<bool>& published) {
    ProcessRegionGeometry geometry;
    geometry.ring_capacity = 16;
    geometry.strings_capacity = 256;
    bytes_ = ProcessRegionBytes(geometry);
    memfd_ = memfd_create("probe", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    EXPECT_EQ(ftruncate(memfd_, bytes_), 0);
    EXPECT_EQ(fcntl(memfd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
    memory_ =
        mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, memfd_, 0);
    EXPECT_TRUE(InitProcessRegion(memory_, geometry, 99 + pid));
    auto* header = static_cast<ProcessRegionHeader*>(memory_);
    const uint32_t name = AppendString(header, "work", 4);
    InitSpanRing(RingMemory(header, 0), geometry.ring_capacity);
    header->slots[0].tid = 7;
    header->slots[0].tail_owner.store(7);
    header->slots[0].state.store(kSlotOwned);
    SpanRingWriter ring(RingMemory(header, 0),
                        SpanRingBytes(geometry.ring_capacity));
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    for (bool ok : published) {
      ProbeRecord r{};
      r.start_ns = now.tv_sec * 1000000000LL + now.tv_nsec;
      r.dur_ns = 10;
      r.name = ok ? name : 999u;
      r.category = v1::CATEGORY_USER;
      ring.Push(r);
    }
    ProbeHello hello;
    hello.pid = pid;
    hello.region_bytes = bytes_;
    strcpy(hello.job, job);
    fd_ = ConnectAgent(socket.c_str());
    EXPECT_GE(fd_, 0);
    EXPECT_TRUE(SendMessage(fd_, &hello, sizeof(hello), memfd_));
  }
  ~FakeProbe() {
    End();
    munmap(memory_, bytes_);
    close(memfd_);
  }
  // The process ends (its connection closes).
  void End() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  uint64_t bytes_ = 0;
  int memfd_ = -1;
  void* memory_ = nullptr;
  int fd_ = -1;
};

// A traced process writes 2 good records and 3 naming a string it never
// published: the agent counts the 3 under the process, in --status's reply
// and in the metrics, while it runs and after it ended.
TEST(OperationsTest, AgentCountsInvalidRecordsPerProcess) {
  const std::string base = ShortTempDir();
  const NodeAgentOptions options = SpoolingAgent(base);
  auto agent = NodeAgent::Start(options);
  ASSERT_TRUE(agent.ok()) << agent.status();
  std::thread loop([&] { (*agent)->Run(); });
  FakeProbe probe(options.socket, "job-x", getpid(),
                  {true, false, true, false, false});

  AskAgent(options.socket);  // drains the region
  FlushReply reply = AskAgent(options.socket);
  EXPECT_EQ(reply.counters.spans_invalid, 3u);
  ASSERT_EQ(reply.invalid_processes, 1u);
  EXPECT_EQ(reply.invalid[0].pid, getpid());
  EXPECT_EQ(reply.invalid[0].records, 3u);
  EXPECT_STREQ(reply.invalid[0].job, "job-x");
  EXPECT_STREQ(reply.invalid[0].first,
               "record 1: its name is not in the process's string area");
  const std::string line = "meridian_agent_invalid_records{pid=\"" +
                           std::to_string(getpid()) + "\",job=\"job-x\"} 3";
  std::string metrics = Scrape((*agent)->metrics_port());
  EXPECT_TRUE(HasLine(metrics, line)) << metrics;

  probe.End();  // the process ends: still listed, among the ended
  AskAgent(options.socket);
  reply = AskAgent(options.socket);
  EXPECT_EQ(reply.counters.spans_invalid, 3u);
  ASSERT_EQ(reply.invalid_processes, 1u);
  EXPECT_EQ(reply.invalid[0].records, 3u);
  metrics = Scrape((*agent)->metrics_port());
  EXPECT_TRUE(HasLine(metrics, line)) << metrics;

  (*agent)->Stop();
  loop.join();
  agent->reset();
  (void)!system(("rm -rf " + base).c_str());
}

// `meridian run`'s flush (JobFlushRequest): the reply counts its own job
// only, not another job's bad process on the same agent.
FlushReply AskAgentForJob(const std::string& socket, const char* job) {
  JobFlushRequest request;
  request.timeout_ms = 10000;
  strcpy(request.job, job);
  return Ask(socket, request);
}

TEST(OperationsTest, AJobsFlushCountsThatJobOnly) {
  const std::string base = ShortTempDir();
  const NodeAgentOptions options = SpoolingAgent(base);
  auto agent = NodeAgent::Start(options);
  ASSERT_TRUE(agent.ok()) << agent.status();
  std::thread loop([&] { (*agent)->Run(); });
  FakeProbe bad(options.socket, "other", 11, {true, false, false, false});
  FakeProbe mine(options.socket, "mine", 12, {true, true, true});
  AskAgent(options.socket);  // drains both regions
  bad.End();

  const FlushReply all = AskAgent(options.socket);
  EXPECT_EQ(all.state, FlushReply::kSpooled);  // no collector
  EXPECT_EQ(all.counters.processes, 2u);
  EXPECT_EQ(all.counters.spans_received, 4u);
  EXPECT_EQ(all.counters.spans_spooled, 4u);
  EXPECT_EQ(all.counters.spans_invalid, 3u);
  EXPECT_EQ(all.invalid_processes, 1u);

  const FlushReply reply = AskAgentForJob(options.socket, "mine");
  EXPECT_EQ(reply.state, FlushReply::kSpooled);
  EXPECT_EQ(reply.counters.processes, 1u);
  EXPECT_EQ(reply.counters.spans_received, 3u);
  EXPECT_EQ(reply.counters.spans_spooled, 3u);
  EXPECT_EQ(reply.counters.spans_sent, 0u);
  EXPECT_EQ(reply.counters.spans_invalid, 0u);
  EXPECT_EQ(reply.counters.spans_dropped, 0u);
  EXPECT_EQ(reply.counters.connections_refused, 0u);
  EXPECT_EQ(reply.invalid_processes, 0u);

  const FlushReply other = AskAgentForJob(options.socket, "other");
  EXPECT_EQ(other.counters.processes, 1u);
  EXPECT_EQ(other.counters.spans_received, 1u);
  EXPECT_EQ(other.counters.spans_spooled, 1u);
  EXPECT_EQ(other.counters.spans_invalid, 3u);
  ASSERT_EQ(other.invalid_processes, 1u);
  EXPECT_EQ(other.invalid[0].pid, 11);

  const FlushReply nobody = AskAgentForJob(options.socket, "nobody");
  EXPECT_EQ(nobody.counters.processes, 0u);
  EXPECT_EQ(nobody.counters.spans_received, 0u);
  EXPECT_EQ(nobody.invalid_processes, 0u);

  (*agent)->Stop();
  loop.join();
  agent->reset();
  (void)!system(("rm -rf " + base).c_str());
}

// An analysis of a whole job is refused, with the way out, when it would
// take more memory than the collector allows; one step still answers, and
// a whole job's critical path is walked a block of steps at a time.
TEST(OperationsTest, AnalysesStayWithinTheirMemoryBudget) {
  CollectorOptions options;
  options.listen = "127.0.0.1:0";
  options.db_path = Temp("budget.db");
  options.analysis_memory_bytes = 1 << 20;
  auto collector = Collector::Start(options);
  ASSERT_TRUE(collector.ok()) << collector.status();
  auto channel = grpc::CreateChannel((*collector)->address(),
                                     grpc::InsecureChannelCredentials());
  SyntheticJob job;
  job.job = "big";
  job.ranks = 8;
  job.nodes = 2;
  job.steps = 1000;
  for (int node = 0; node < job.nodes; ++node) {
    auto sent = IngestClient(channel).SendAll(SyntheticBatches(job, node));
    ASSERT_TRUE(sent.ok()) << sent.status();
  }
  // A job without steps, too large too.
  BatchBuilder flat("flat-agent");
  const int flat_track =
      flat.DeclareTrack(flat.DeclareProcess({"flat", "node-0", 0, 0, 1, 1}),
                        v1::TRACK_KIND_THREAD, 1, "main");
  for (int i = 0; i < 6000; ++i) {
    flat.AddSpan(flat_track, v1::CATEGORY_USER, "work",
                 1700000000000000000 + 1000 * i, 900);
  }
  // A job of one step larger than the budget: its step is refused too.
  const int huge_track =
      flat.DeclareTrack(flat.DeclareProcess({"huge", "node-0", 0, 0, 2, 1}),
                        v1::TRACK_KIND_THREAD, 1, "main");
  for (int i = 0; i < 6000; ++i) {
    flat.AddSpan(huge_track, v1::CATEGORY_USER, "work",
                 1700000000000000000 + 1000 * i, 900)
        ->set_step(0);
  }
  ASSERT_TRUE(IngestClient(channel).SendAll({flat.Take()}).ok());
  auto query = v1::Query::NewStub(channel);
  grpc::ClientContext flat_context;
  v1::CriticalPathRequest flat_whole;
  flat_whole.set_job("flat");
  v1::CriticalPathReply reply;
  grpc::Status status =
      query->GetCriticalPath(&flat_context, flat_whole, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(status.error_message(),
            "job flat has 6000 spans: analysing it whole would take about 1 "
            "MiB, over this collector's --analysis-memory-mib 1; analyse one "
            "step (--step N) or raise the limit");
  // The job with steps: its whole path, walked in blocks of about 5,500
  // spans (streamed_path_test.cc checks it is the whole-job walk's).
  grpc::ClientContext whole_context;
  v1::CriticalPathRequest whole;
  whole.set_job("big");
  status = query->GetCriticalPath(&whole_context, whole, &reply);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(reply.job(), "big");
  EXPECT_FALSE(reply.has_step());
  EXPECT_EQ(reply.start_ns(), 1699999999999000000);
  int64_t sum = 0;
  for (const v1::PathSegment& s : reply.segments()) sum += s.dur_ns();
  EXPECT_EQ(sum, reply.dur_ns());
  EXPECT_GT(reply.segments_size(), 1000);  // every step's forward at least
  EXPECT_EQ(reply.chunks_read(), reply.chunks());
  // The export with the critical path: the spans streamed, the path in
  // blocks; without steps, refused as the path is.
  auto export_with_path = [&](const std::string& job, std::string* trace) {
    grpc::ClientContext context;
    v1::ExportRequest request;
    request.mutable_filter()->set_job(job);
    request.set_critical_path(true);
    auto reader = query->ExportTrace(&context, request);
    v1::TraceChunk chunk;
    while (reader->Read(&chunk)) trace->append(chunk.data());
    return reader->Finish();
  };
  std::string trace;
  status = export_with_path("big", &trace);
  ASSERT_TRUE(status.ok()) << status.error_message();
  size_t path_events = 0;
  for (size_t at = trace.find("\"cat\":\"critical_path\"");
       at != std::string::npos;
       at = trace.find("\"cat\":\"critical_path\"", at + 1)) {
    ++path_events;
  }
  EXPECT_EQ(path_events, static_cast<size_t>(reply.segments_size()));
  std::string flat_trace;
  status = export_with_path("flat", &flat_trace);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(status.error_message(),
            "job flat has 6000 spans: analysing it whole would take about 1 "
            "MiB, over this collector's --analysis-memory-mib 1; analyse one "
            "step (--step N) or raise the limit");
  grpc::ClientContext step_context;
  v1::CriticalPathRequest one = whole;
  one.set_step(5);
  EXPECT_TRUE(query->GetCriticalPath(&step_context, one, &reply).ok());
  grpc::ClientContext huge_context;
  v1::CriticalPathRequest huge_step;
  huge_step.set_job("huge");
  huge_step.set_step(0);
  status = query->GetCriticalPath(&huge_context, huge_step, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(status.error_message(),
            "job huge's step 0 holds more than 5518 spans: analysing it would "
            "take more than this collector's --analysis-memory-mib 1; raise "
            "the limit");

  // A replay holds two timelines: twice the memory. The whole job is
  // replayed a block of steps at a time (streamed_replay_test.cc checks the
  // steps against a whole replay), without critical paths.
  grpc::ClientContext replay_context;
  v1::ReplayRequest replay;
  replay.set_job("big");
  v1::ReplayReply replayed;
  status = query->Replay(&replay_context, replay, &replayed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(replayed.job(), "big");
  EXPECT_GT(replayed.blocks(), 1);
  EXPECT_EQ(replayed.steps_size(), 1000);
  EXPECT_EQ(replayed.ranks_size(), 8);
  EXPECT_EQ(replayed.predicted_ns(), replayed.measured_ns());
  EXPECT_FALSE(replayed.has_measured_path());
  // Its trace (both timelines of every span) still needs the whole job.
  {
    grpc::ClientContext trace_context;
    auto reader = query->ExportReplayTrace(&trace_context, replay);
    v1::TraceChunk chunk;
    while (reader->Read(&chunk)) {
    }
    status = reader->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_EQ(status.error_message(),
              "job big has 48008 spans: analysing it whole would take about "
              "17 MiB, over this collector's --analysis-memory-mib 1; replay "
              "a range of steps (--steps A:B) or raise the limit");
  }
  // Without steps, refused as before.
  grpc::ClientContext flat_replay_context;
  v1::ReplayRequest flat_replay;
  flat_replay.set_job("flat");
  status = query->Replay(&flat_replay_context, flat_replay, &replayed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(status.error_message(),
            "job flat has 6000 spans: analysing it whole would take about 2 "
            "MiB, over this collector's --analysis-memory-mib 1; replay a "
            "range of steps (--steps A:B) or raise the limit");
  grpc::ClientContext replay_step_context;
  replay.set_first_step(5);
  replay.set_last_step(5);
  status = query->Replay(&replay_step_context, replay, &replayed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(replayed.predicted_ns(), replayed.measured_ns());
  ASSERT_EQ(replayed.steps_size(), 1);
  EXPECT_EQ(replayed.steps(0).step(), 5);
  // A range of steps is read alone too when the job is over the budget...
  grpc::ClientContext range_context;
  v1::ReplayRequest range = replay;
  range.set_first_step(5);
  range.set_last_step(7);
  status = query->Replay(&range_context, range, &replayed);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(replayed.predicted_ns(), replayed.measured_ns());
  ASSERT_EQ(replayed.steps_size(), 3);
  EXPECT_EQ(replayed.steps(0).step(), 5);
  EXPECT_EQ(replayed.steps(2).step(), 7);
  // ...and refused by name once its read is over it.
  grpc::ClientContext all_steps_context;
  range.set_first_step(0);
  range.set_last_step(999);
  status = query->Replay(&all_steps_context, range, &replayed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(status.error_message(),
            "job big's steps 0..999 hold more than 2759 spans: analysing them "
            "would take more than this collector's --analysis-memory-mib 1; "
            "raise the limit, or analyse fewer steps");
  // Bad requests are refused with a reason; the collector keeps serving.
  grpc::ClientContext bad_context;
  v1::ReplayRequest bad = replay;
  bad.add_scales()->set_pattern("compute");
  bad.mutable_scales(0)->set_factor(-1);
  status = query->Replay(&bad_context, bad, &replayed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  grpc::ClientContext half_context;
  v1::ReplayRequest half = replay;
  half.clear_last_step();
  status = query->Replay(&half_context, half, &replayed);
  EXPECT_EQ(status.error_message(),
            "give both first_step and last_step (--steps A:B), or neither");
  grpc::ClientContext again_context;
  EXPECT_TRUE(query->GetCriticalPath(&again_context, one, &reply).ok());
}

// Whole-job steps and stragglers (from the job's step summaries) never
// answer for a job that has changed since: spans arriving make the steps
// not yet complete summarised again.
TEST(OperationsTest, StepSummariesFollowTheJob) {
  CollectorOptions options;
  options.listen = "127.0.0.1:0";
  options.db_path = Temp("cache.db");
  auto collector = Collector::Start(options);
  ASSERT_TRUE(collector.ok()) << collector.status();
  auto channel = grpc::CreateChannel((*collector)->address(),
                                     grpc::InsecureChannelCredentials());
  auto query = v1::Query::NewStub(channel);
  auto steps = [&](const std::string& job) {
    grpc::ClientContext context;
    v1::StepsRequest request;
    request.set_job(job);
    request.set_means_only(true);
    v1::StepsReply reply;
    grpc::Status status = query->GetSteps(&context, request, &reply);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return reply.steps_size();
  };
  SyntheticJob job;
  job.job = "growing";
  job.ranks = 2;
  job.nodes = 1;
  job.steps = 3;
  job.spans_per_batch = 2 * kSyntheticSpansPerStep;  // a batch per step
  std::vector<v1::Batch> batches = SyntheticBatches(job, 0);
  ASSERT_GE(batches.size(), 3u);
  IngestClient ingest(channel);
  ASSERT_TRUE(ingest.SendAll({batches[0]}).ok());
  const int first = steps("growing");
  EXPECT_LT(first, 3);
  EXPECT_EQ(steps("growing"), first);  // kept: the same answer
  ASSERT_TRUE(
      ingest.SendAll(std::vector<v1::Batch>(batches.begin() + 1, batches.end()))
          .ok());
  EXPECT_EQ(steps("growing"), 3);
  // Stragglers from the step summaries the steps query stored: two
  // Allreduces a step (the untagged Bcast before step 0 is not counted).
  grpc::ClientContext context;
  v1::StragglersRequest request;
  request.set_job("growing");
  v1::StragglersReply reply;
  ASSERT_TRUE(query->GetStragglers(&context, request, &reply).ok());
  EXPECT_TRUE(reply.from_summaries());
  EXPECT_EQ(reply.instances(), 2 * 3);
}

// A collector, with metrics, that refreshes a job once no batch of it has
// come for 2 s (longer than the gaps between a test's batches: one refresh
// for each time the job goes quiet).
absl::StatusOr<std::unique_ptr<Collector>> RefreshingCollector(
    const std::string& db) {
  CollectorOptions options;
  options.listen = "127.0.0.1:0";
  options.db_path = Temp(db);
  options.refresh_after = absl::Seconds(2);
  options.metrics = "127.0.0.1:0";
  return Collector::Start(options);
}

// The Clocks reply for `job` from the collector at `address`.
v1::ClocksReply Clocks(const std::string& address, const std::string& job) {
  auto query = v1::Query::NewStub(
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::ClocksRequest request;
  request.set_job(job);
  v1::ClocksReply reply;
  const grpc::Status status = query->GetClocks(&context, request, &reply);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return reply;
}

// The collector's refresher solves a quiet job's clocks and makes its step
// summaries with no query asking: the first queries read both, and make and
// solve nothing.
TEST(OperationsTest, AQuietJobIsRefreshedInTheBackground) {
  auto collector = RefreshingCollector("refresh.db");
  ASSERT_TRUE(collector.ok()) << collector.status();
  auto channel = grpc::CreateChannel((*collector)->address(),
                                     grpc::InsecureChannelCredentials());
  SyntheticJob job;
  job.job = "quiet";
  job.ranks = 4;
  job.nodes = 2;
  job.steps = 3;
  std::vector<v1::Batch> batches = SyntheticBatches(job, 0);
  for (v1::Batch& batch : SyntheticBatches(job, 1)) {
    batches.push_back(std::move(batch));
  }
  ASSERT_TRUE(IngestClient(channel).SendAll(batches).ok());
  ASSERT_TRUE((*collector)->WaitRefreshed(absl::Seconds(60)));
  auto query = v1::Query::NewStub(channel);
  {
    const v1::ClocksReply reply = Clocks((*collector)->address(), "quiet");
    EXPECT_TRUE(reply.stored());
    EXPECT_EQ(reply.nodes_size(), 2);
  }
  {
    grpc::ClientContext context;
    v1::StepsRequest request;
    request.set_job("quiet");
    v1::StepsReply reply;
    ASSERT_TRUE(query->GetSteps(&context, request, &reply).ok());
    EXPECT_TRUE(reply.from_summaries());
    EXPECT_EQ(reply.summarised(), 0);
    EXPECT_EQ(reply.steps_size(), 3);
  }
  // One refresh: the job went quiet once.
  const std::string metrics = Scrape((*collector)->metrics_port());
  EXPECT_TRUE(
      HasLine(metrics, "meridian_collector_refreshes_total{result=\"done\"} 1"))
      << metrics;
  EXPECT_TRUE(HasLine(
      metrics, "meridian_collector_refreshes_total{result=\"failed\"} 0"));
  EXPECT_TRUE(HasLine(metrics, "meridian_collector_refresh_waiting 0"));
}

// A job whose processes have all ended is refreshed at once, not once it
// has been quiet: through a real agent (its processes' connections close)
// to a collector that would wait an hour for quiet.
TEST(OperationsTest, AJobIsRefreshedOnceAllItsProcessesEnded) {
  CollectorOptions collector_options;
  collector_options.listen = "127.0.0.1:0";
  collector_options.db_path = Temp("ended.db");
  collector_options.refresh_after = absl::Hours(1);
  collector_options.summarise_every = absl::ZeroDuration();  // only once quiet
  collector_options.metrics = "127.0.0.1:0";
  auto collector = Collector::Start(collector_options);
  ASSERT_TRUE(collector.ok()) << collector.status();
  const std::string base = ShortTempDir();
  NodeAgentOptions options = SpoolingAgent(base);
  options.collector = (*collector)->address();
  auto agent = NodeAgent::Start(options);
  ASSERT_TRUE(agent.ok()) << agent.status();
  std::thread loop([&] { (*agent)->Run(); });
  FakeProbe first(options.socket, "ends", 21, {true, true});
  FakeProbe second(options.socket, "ends", 22, {true});
  FakeProbe other(options.socket, "other", 23, {true});
  AskAgent(options.socket);  // drains the regions
  EXPECT_EQ(AskAgent(options.socket).state, FlushReply::kDelivered);
  auto refreshes = [&](const std::string& result) {
    return absl::StrCat("meridian_collector_refreshes_total{result=\"", result,
                        "\"} ");
  };
  std::string metrics = Scrape((*collector)->metrics_port());
  EXPECT_TRUE(HasLine(metrics, "meridian_collector_refresh_waiting 2"))
      << metrics;

  // One of its processes ends: the job still runs. (The second flush waits
  // for what the agent sent on the first's close: the end batch.)
  first.End();
  AskAgent(options.socket);
  EXPECT_EQ(AskAgent(options.socket).state, FlushReply::kDelivered);
  metrics = Scrape((*collector)->metrics_port());
  EXPECT_TRUE(HasLine(metrics, refreshes("done") + "0")) << metrics;
  EXPECT_TRUE(HasLine(metrics, "meridian_collector_refresh_waiting 2"));

  // The last one ends: refreshed now, while "other" still waits its hour.
  second.End();
  AskAgent(options.socket);
  EXPECT_EQ(AskAgent(options.socket).state, FlushReply::kDelivered);
  // (EXPECT, not ASSERT, here on: the agent's loop is stopped below.)
  EXPECT_TRUE((*collector)->WaitRefreshes(1, absl::Seconds(60)));
  metrics = Scrape((*collector)->metrics_port());
  EXPECT_TRUE(HasLine(metrics, refreshes("done") + "1")) << metrics;
  EXPECT_TRUE(HasLine(metrics, refreshes("failed") + "0"));
  EXPECT_TRUE(HasLine(metrics, "meridian_collector_refresh_waiting 1"));
  // The refresh's solution, read.
  EXPECT_TRUE(Clocks((*collector)->address(), "ends").stored());

  (*agent)->Stop();
  loop.join();
  agent->reset();
  (void)!system(("rm -rf " + base).c_str());
}

// A batch that only marks one of a job's two processes ended moves the
// job's last write (its stored results are no longer of the job as it is),
// so the job is refreshed again once quiet, though it has not ended.
TEST(OperationsTest, AnEndThatEndsNoJobStillBringsARefresh) {
  auto collector = RefreshingCollector("end-of-one.db");
  ASSERT_TRUE(collector.ok()) << collector.status();
  auto channel = grpc::CreateChannel((*collector)->address(),
                                     grpc::InsecureChannelCredentials());
  BatchBuilder builder("two-ranks");
  const ProcessDesc ranks[] = {{"half", "n", 0, 0, 40, 2},
                               {"half", "n", 1, 1, 41, 2}};
  for (const ProcessDesc& rank : ranks) {
    const int t = builder.DeclareTrack(builder.DeclareProcess(rank),
                                       v1::TRACK_KIND_THREAD, rank.pid, "main");
    builder.AddSpan(t, v1::CATEGORY_MPI, "MPI_Barrier", 1000000, 10);
  }
  ASSERT_TRUE(IngestClient(channel).SendAll({builder.Take()}).ok());
  ASSERT_TRUE((*collector)->WaitRefreshes(1, absl::Seconds(60)));
  builder.MarkEnded(builder.DeclareProcess(ranks[0]));
  ASSERT_TRUE(IngestClient(channel).SendAll({builder.Take()}).ok());
  ASSERT_TRUE((*collector)->WaitRefreshes(2, absl::Seconds(60)));
  // Of the job as it is, end batch included.
  EXPECT_TRUE(Clocks((*collector)->address(), "half").stored());
}

// A job that goes quiet twice is refreshed twice: its clocks are solved
// whole the first time and brought up to date from the kept state the
// second (docs/clocks.md, "Incremental updates"), to the solution a solve
// from all its spans gives.
TEST(OperationsTest, ASecondRefreshUpdatesTheClocksFromTheKeptState) {
  auto collector = RefreshingCollector("incremental.db");
  ASSERT_TRUE(collector.ok()) << collector.status();
  auto channel = grpc::CreateChannel((*collector)->address(),
                                     grpc::InsecureChannelCredentials());
  SyntheticJob job;
  job.job = "twice";
  job.ranks = 8;
  job.nodes = 4;
  job.steps = 20;
  job.spans_per_batch = 64;
  job.node_skew_ns = 25000;
  job.time_ordered = true;
  std::vector<v1::Batch> first, second;
  for (int node = 0; node < job.nodes; ++node) {
    std::vector<v1::Batch> batches = SyntheticBatches(job, node);
    ASSERT_GT(batches.size(), 2u);
    for (size_t i = 0; i < batches.size(); ++i) {
      (i < batches.size() / 2 ? first : second).push_back(batches[i]);
    }
  }
  // The writer stores the first refresh's solution before it acknowledges
  // the second part (it runs in order), so the second refresh finds it.
  ASSERT_TRUE(IngestClient(channel).SendAll(first).ok());
  ASSERT_TRUE((*collector)->WaitRefreshed(absl::Seconds(60)));
  ASSERT_TRUE(IngestClient(channel).SendAll(second).ok());
  ASSERT_TRUE((*collector)->WaitRefreshed(absl::Seconds(60)));
  const std::string metrics = Scrape((*collector)->metrics_port());
  EXPECT_TRUE(HasLine(
      metrics, "meridian_collector_clock_updates_total{solve=\"whole\"} 1"))
      << metrics;
  EXPECT_TRUE(HasLine(
      metrics,
      "meridian_collector_clock_updates_total{solve=\"incremental\"} 1"));
  // Both took their evidence from what the writer stored, reading no chunk
  // (docs/clocks.md, "Evidence"), and left none of it held.
  EXPECT_TRUE(HasLine(
      metrics,
      "meridian_collector_evidence_log_takes_total{result=\"taken\"} 2"));
  EXPECT_TRUE(HasLine(
      metrics,
      "meridian_collector_evidence_log_takes_total{result=\"missed\"} 0"));
  EXPECT_TRUE(HasLine(metrics, "meridian_collector_evidence_log_bytes 0"));
  auto query = v1::Query::NewStub(channel);
  auto clocks = [&](bool resolve) {
    grpc::ClientContext context;
    v1::ClocksRequest request;
    request.set_job("twice");
    request.set_resolve(resolve);
    v1::ClocksReply reply;
    EXPECT_TRUE(query->GetClocks(&context, request, &reply).ok());
    EXPECT_EQ(reply.stored(), !resolve);
    reply.clear_solved_ns();
    reply.clear_stored();
    return reply.DebugString();
  };
  const std::string kept = clocks(false);
  EXPECT_EQ(kept, clocks(true));
  // 41 instances (20 steps' two Allreduces and the Bcast) of 8 ranks; node
  // n's clock 25 us x n ahead breaks 100 of them before the refinement.
  EXPECT_NE(kept.find("constraints: 328\nviolations_before: 100\n"),
            std::string::npos)
      << kept;
}

int64_t PeakRssMib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) >> 10;
  }
  return -1;
}

// Five 15 MiB batches of empty strings (one such 60 MB batch used to cost
// 2.2 GB to parse, and five aborted the collector): each is counted and
// refused before it is parsed, and memory stays near the messages' size.
TEST(OperationsTest, BatchesOfEmptyStringsAreRefusedUnparsed) {
  CollectorOptions options;
  options.listen = "127.0.0.1:0";
  options.db_path = Temp("strings.db");
  auto collector = Collector::Start(options);
  ASSERT_TRUE(collector.ok()) << collector.status();
  auto channel = grpc::CreateChannel((*collector)->address(),
                                     grpc::InsecureChannelCredentials());
  std::string empty_strings;
  for (int i = 0; i < (15 << 19); ++i)
    empty_strings += std::string("\x1a\x00", 2);
  const int64_t before = PeakRssMib();
  for (int round = 0; round < 5; ++round) {
    const std::string reply =
        RawCall(channel, "/meridian.v1.Ingest/Stream", empty_strings);
    v1::Ack ack;
    ASSERT_TRUE(ack.ParseFromString(reply));
    EXPECT_EQ(ack.result(), v1::Ack::RESULT_REJECTED);
    EXPECT_TRUE(absl::EndsWith(
        ack.error(),
        "was refused unparsed: the batch has 7864320 strings; at most 262144 "
        "are allowed"))
        << ack.error();
  }
  EXPECT_LT(PeakRssMib() - before, 200);
}

// A stream that sends nothing is cancelled after the idle timeout (2,000
// idle streams used to hold 4,009 threads): the client's read ends, and the
// collector counts it.
TEST(OperationsTest, IdleStreamsAreCancelled) {
  CollectorOptions options;
  options.listen = "127.0.0.1:0";
  options.db_path = Temp("idle.db");
  options.ingest.idle_timeout = absl::Milliseconds(200);
  auto collector = Collector::Start(options);
  ASSERT_TRUE(collector.ok()) << collector.status();
  auto channel = grpc::CreateChannel((*collector)->address(),
                                     grpc::InsecureChannelCredentials());
  auto stub = v1::Ingest::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));  // a guard only
  auto stream = stub->Stream(&context);
  v1::Ack ack;
  EXPECT_FALSE(stream->Read(&ack));  // ends when the collector cancels it
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ((*collector)->counters().streams_idle.load(), 1);
}

}  // namespace
}  // namespace meridian
