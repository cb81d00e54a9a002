// IngestService over real loopback gRPC, writing through a real BatchWriter
// into a real SQLite store in TEST_TMPDIR; what was stored is read back
// with a second connection. An ack is written only once its batch is
// committed (or refused), so reading an ack is the test's synchronisation.
#include "collector/ingest_service.h"

#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "wire/batch_builder.h"

namespace meridian {
namespace {

constexpr int64_t kT = 1700000000000000000;

using Stream = grpc::ClientReaderWriter<v1::Batch, v1::Ack>;

class IngestServiceTest : public ::testing::Test {
 protected:
  void Start(std::shared_ptr<const Authorizer> auth, IngestLimits limits = {}) {
    path_ = std::string(getenv("TEST_TMPDIR")) + "/" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() +
            ".db";
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::remove((path_ + suffix).c_str());
    }
    StoreOptions options;
    options.full_sync = false;
    auto store = Store::Open(path_, options);
    ASSERT_TRUE(store.ok()) << store.status();
    writer_ = std::make_unique<BatchWriter>(std::move(*store));
    service_ = std::make_unique<IngestService>(writer_.get(), auth, limits);
    service_->set_on_stored([this](const std::string& job, bool ended) {
      absl::MutexLock lock(&mu_);
      stored_.push_back(job + (ended ? " ended" : " changed"));
    });
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = v1::Ingest::NewStub(
        server_->InProcessChannel(grpc::ChannelArguments()));
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
    writer_.reset();  // commits, and calls back, before the service goes
    service_.reset();
  }

  std::unique_ptr<Stream> Open(grpc::ClientContext* context,
                               const char* token = nullptr) {
    if (token != nullptr) {
      context->AddMetadata("authorization", std::string("Bearer ") + token);
    }
    return stub_->Stream(context);
  }
  // Sends `batch` and reads its ack.
  static v1::Ack Send(Stream& stream, const v1::Batch& batch) {
    v1::Ack ack;
    EXPECT_TRUE(stream.Write(batch));
    EXPECT_TRUE(stream.Read(&ack));
    return ack;
  }
  // The spans stored for `job`, as "name@track start+dur", in the store's
  // order; or the error that loading the job gave.
  std::vector<std::string> StoredSpans(const std::string& job) {
    auto store = Store::Open(path_);
    if (!store.ok()) return {std::string(store.status().message())};
    absl::StatusOr<JobCatalog> catalog = (*store)->LoadCatalog(job);
    if (!catalog.ok()) return {std::string(catalog.status().message())};
    std::map<int64_t, std::string> ops, tracks;
    for (const OpInfo& op : catalog->ops) ops[op.id] = op.name;
    for (const TrackInfo& track : catalog->tracks) {
      tracks[track.id] = track.name;
    }
    std::vector<std::string> spans;
    absl::Status scanned =
        (*store)->Scan(catalog->job, {}, [&](const StoredSpan& span) {
          spans.push_back(ops[span.op_id] + "@" + tracks[span.track_id] + " " +
                          std::to_string(span.start_ns - kT) + "+" +
                          std::to_string(span.dur_ns));
          return true;
        });
    if (!scanned.ok()) spans.push_back(std::string(scanned.message()));
    return spans;
  }
  std::vector<std::string> Stored() {
    absl::MutexLock lock(&mu_);
    return stored_;
  }

  std::string path_;
  std::unique_ptr<BatchWriter> writer_;
  std::unique_ptr<IngestService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Ingest::Stub> stub_;
  absl::Mutex mu_;
  std::vector<std::string> stored_ ABSL_GUARDED_BY(mu_);  // on_stored calls
};

// Batches of `job` from agent "agent-1", numbered 1, 2, ...: each with two
// spans, at 0 and 100 ns after the previous batch's.
class Agent {
 public:
  explicit Agent(const std::string& job) : builder_("agent-1") {
    process_ = builder_.DeclareProcess({job, "node-1", 0, 0, 100});
    track_ = builder_.DeclareTrack(process_, v1::TRACK_KIND_THREAD, 1, "main");
  }
  v1::Batch Next(bool ended = false) {
    builder_.AddSpan(track_, v1::CATEGORY_USER, "step", kT + at_, 90);
    builder_.AddSpan(track_, v1::CATEGORY_MPI, "MPI_Barrier", kT + at_ + 10,
                     50);
    at_ += 1000;
    if (ended) builder_.MarkEnded(process_);
    return builder_.Take();
  }

 private:
  BatchBuilder builder_;
  int process_;
  int track_;
  int64_t at_ = 0;
};

TEST_F(IngestServiceTest, StoresValidBatchesAndAcksEachInOrder) {
  Start(Authorizer::AllowAll());
  Agent agent("train");
  grpc::ClientContext context;
  auto stream = Open(&context);
  v1::Ack ack = Send(*stream, agent.Next());
  EXPECT_EQ(ack.agent_id(), "agent-1");
  EXPECT_EQ(ack.batch_seq(), 1u);
  EXPECT_EQ(ack.result(), v1::Ack::RESULT_STORED);
  EXPECT_EQ(ack.spans_stored(), 2u);
  EXPECT_EQ(ack.error(), "");
  EXPECT_EQ(Stored(), (std::vector<std::string>{"train changed"}));
  ack = Send(*stream, agent.Next(/*ended=*/true));
  EXPECT_EQ(ack.batch_seq(), 2u);
  EXPECT_EQ(ack.result(), v1::Ack::RESULT_STORED);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(StoredSpans("train"),
            (std::vector<std::string>{
                "step@main 0+90", "MPI_Barrier@main 10+50", "step@main 1000+90",
                "MPI_Barrier@main 1010+50"}));
  // The process's end mark ended the job.
  EXPECT_EQ(Stored(), (std::vector<std::string>{
                          "train changed", "train changed", "train ended"}));
  EXPECT_EQ(service_->counters().batches_stored, 2);
  EXPECT_EQ(service_->counters().spans_stored, 4);
  EXPECT_EQ(service_->SpansByJob(),
            (std::vector<std::pair<std::string, double>>{{"train", 4}}));
}

TEST_F(IngestServiceTest, AnInvalidBatchIsRejectedAndTheStreamGoesOn) {
  Start(Authorizer::AllowAll());
  Agent bad("bad-job");
  v1::Batch no_track = bad.Next();
  no_track.mutable_spans(0)->set_track(5);
  v1::Batch no_seq = bad.Next();
  no_seq.set_batch_seq(0);
  grpc::ClientContext context;
  auto stream = Open(&context);
  v1::Ack ack = Send(*stream, no_track);
  EXPECT_EQ(ack.agent_id(), "agent-1");
  EXPECT_EQ(ack.batch_seq(), 1u);
  EXPECT_EQ(ack.result(), v1::Ack::RESULT_REJECTED);
  EXPECT_EQ(ack.error(),
            "batch 1 from agent \"agent-1\": span 0: track index 5 is out of "
            "range; the batch has 1 tracks");
  EXPECT_EQ(ack.spans_stored(), 0u);
  ack = Send(*stream, no_seq);
  EXPECT_EQ(ack.result(), v1::Ack::RESULT_REJECTED);
  EXPECT_EQ(ack.error(),
            "batch 0 from agent \"agent-1\": batch_seq is 0; sequence numbers "
            "start at 1");
  // The same stream still stores a valid batch.
  Agent good("train");
  ack = Send(*stream, good.Next());
  EXPECT_EQ(ack.result(), v1::Ack::RESULT_STORED);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(
      StoredSpans("train"),
      (std::vector<std::string>{"step@main 0+90", "MPI_Barrier@main 10+50"}));
  EXPECT_EQ(
      StoredSpans("bad-job"),
      (std::vector<std::string>{"no job \"bad-job\" in store " + path_ +
                                " (`meridian jobs` lists the stored jobs)"}));
  EXPECT_EQ(Stored(), (std::vector<std::string>{"train changed"}));
  EXPECT_EQ(service_->counters().batches_rejected, 2);
  EXPECT_EQ(service_->counters().batches_stored, 1);
}

TEST_F(IngestServiceTest, AResentBatchIsADuplicateAndNotStoredAgain) {
  Start(Authorizer::AllowAll());
  Agent agent("train");
  const v1::Batch batch = agent.Next();
  {
    grpc::ClientContext context;
    auto stream = Open(&context);
    EXPECT_EQ(Send(*stream, batch).result(), v1::Ack::RESULT_STORED);
    const v1::Ack again = Send(*stream, batch);
    EXPECT_EQ(again.result(), v1::Ack::RESULT_DUPLICATE);
    EXPECT_EQ(again.spans_stored(), 0u);
    stream->WritesDone();
    EXPECT_TRUE(stream->Finish().ok());
  }
  grpc::ClientContext context;  // an agent's resend, on its next stream
  auto stream = Open(&context);
  EXPECT_EQ(Send(*stream, batch).result(), v1::Ack::RESULT_DUPLICATE);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(StoredSpans("train").size(), 2u);
  EXPECT_EQ(Stored(), (std::vector<std::string>{"train changed"}));
  EXPECT_EQ(service_->counters().batches_stored, 1);
  EXPECT_EQ(service_->counters().batches_duplicate, 2);
  EXPECT_EQ(service_->counters().spans_stored, 2);
}

// With tokens: a batch naming a job the token may not write is refused
// whole; an agent id is keyed under its token, so another token's batch of
// the same agent id and number is no duplicate of it.
TEST_F(IngestServiceTest, TokensScopeJobsAndKeyAgentIds) {
  auto auth = Authorizer::Parse(
      "first-token-0123456789   write:train\n"
      "second-token-0123456789  write:*\n"
      "reader-token-0123456789  read:*\n",
      "tokens");
  ASSERT_TRUE(auth.ok()) << auth.status();
  Start(*auth);
  Agent train("train"), other("other");
  const v1::Batch batch = train.Next();
  {
    grpc::ClientContext context;
    auto stream = Open(&context, "first-token-0123456789");
    EXPECT_EQ(Send(*stream, batch).result(), v1::Ack::RESULT_STORED);
    const v1::Ack refused = Send(*stream, other.Next());
    EXPECT_EQ(refused.result(), v1::Ack::RESULT_REJECTED);
    EXPECT_EQ(refused.error(), "the token may not write job \"other\"");
    stream->WritesDone();
    EXPECT_TRUE(stream->Finish().ok());
  }
  {
    grpc::ClientContext context;
    auto stream = Open(&context, "second-token-0123456789");
    EXPECT_EQ(Send(*stream, batch).result(), v1::Ack::RESULT_STORED);
    stream->WritesDone();
    EXPECT_TRUE(stream->Finish().ok());
  }
  EXPECT_EQ(StoredSpans("train").size(), 4u);
  EXPECT_EQ(
      StoredSpans("other"),
      (std::vector<std::string>{"no job \"other\" in store " + path_ +
                                " (`meridian jobs` lists the stored jobs)"}));
  for (const char* token : {"reader-token-0123456789", "no-such-token-0123"}) {
    grpc::ClientContext context;
    auto stream = Open(&context, token);
    stream->WritesDone();
    const grpc::Status status = stream->Finish();
    EXPECT_EQ(status.error_code(), token[0] == 'r'
                                       ? grpc::StatusCode::PERMISSION_DENIED
                                       : grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(status.error_message(),
              token[0] == 'r' ? "the token grants no write scope"
                              : "the token is not one this collector knows");
  }
}

TEST_F(IngestServiceTest, StreamsBeyondTheLimitAreToldWhenToRetry) {
  IngestLimits limits;
  limits.max_streams = 1;
  limits.retry_after_ms = 250;
  Start(Authorizer::AllowAll(), limits);
  Agent agent("train");
  grpc::ClientContext first_context;
  auto first = Open(&first_context);
  // Its ack means the first stream is being served.
  EXPECT_EQ(Send(*first, agent.Next()).result(), v1::Ack::RESULT_STORED);
  {
    grpc::ClientContext context;
    auto refused = Open(&context);
    refused->WritesDone();
    const grpc::Status status = refused->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_EQ(status.error_message(),
              "the collector serves at most 1 ingest streams at once; retry "
              "in 250 ms (unacknowledged batches are resent)");
    auto retry = context.GetServerTrailingMetadata().find("retry-after-ms");
    ASSERT_NE(retry, context.GetServerTrailingMetadata().end());
    EXPECT_EQ(std::string(retry->second.data(), retry->second.size()), "250");
  }
  first->WritesDone();
  EXPECT_TRUE(first->Finish().ok());
  grpc::ClientContext context;  // the first one's place is free again
  auto next = Open(&context);
  EXPECT_EQ(Send(*next, agent.Next()).result(), v1::Ack::RESULT_STORED);
  next->WritesDone();
  EXPECT_TRUE(next->Finish().ok());
  EXPECT_EQ(service_->counters().streams_refused, 1);
}

// A commit that fails (an injected fault in the store) cancels the stream
// (the collector's log says why) with no ack for the batch, which was not
// stored; resent on a new stream once the store works, it is stored.
TEST_F(IngestServiceTest, AFailedCommitCancelsTheStreamAndTheResendIsStored) {
  Start(Authorizer::AllowAll());
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other,
                         "CREATE TRIGGER fault BEFORE INSERT ON chunks BEGIN "
                         "SELECT RAISE(ABORT, 'injected fault'); END;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  Agent agent("train");
  const v1::Batch batch = agent.Next();
  {
    grpc::ClientContext context;
    auto stream = Open(&context);
    ASSERT_TRUE(stream->Write(batch));
    v1::Ack ack;
    EXPECT_FALSE(stream->Read(&ack));
    const grpc::Status status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
    EXPECT_EQ(status.error_message(), "Cancelled on the server side");
  }
  EXPECT_EQ(Stored(), std::vector<std::string>{});
  EXPECT_EQ(service_->counters().batches_stored, 0);
  ASSERT_EQ(
      sqlite3_exec(other, "DROP TRIGGER fault;", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(other);
  grpc::ClientContext context;
  auto stream = Open(&context);
  EXPECT_EQ(Send(*stream, batch).result(), v1::Ack::RESULT_STORED);
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(StoredSpans("train").size(), 2u);
}

TEST_F(IngestServiceTest, AStreamThatSendsNothingIsCancelledWhenIdle) {
  IngestLimits limits;
  limits.idle_timeout = absl::Milliseconds(50);
  Start(Authorizer::AllowAll(), limits);
  grpc::ClientContext context;
  auto stream = Open(&context);
  v1::Ack ack;
  EXPECT_FALSE(stream->Read(&ack));  // until the collector gives up on it
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_EQ(service_->counters().streams_idle, 1);
}

}  // namespace
}  // namespace meridian
