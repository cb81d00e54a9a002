// IngestService: the collector's side of meridian.v1.Ingest/Stream.
//
// For each batch on a stream: its raw bytes counted (ScanBatchShape: a
// batch over the per-batch bounds, or bytes that are no Batch, are answered
// RESULT_REJECTED without being parsed), then parsed and ValidateBatch();
// an invalid batch is answered
// RESULT_REJECTED with the validator's message and the stream goes on; a
// valid one goes to the BatchWriter and is answered RESULT_STORED or
// RESULT_DUPLICATE once committed. Acks are written in the order the batches
// arrived. If a commit fails, the stream is cancelled (the client sees
// CANCELLED: a blocked read can only be ended so; the collector's log says
// why) with no ack for what failed, so the agent resends it on a new stream.
//
// Bounded (IngestLimits): at most `max_streams` streams at once (more end at
// once with RESOURCE_EXHAUSTED); at most `max_in_flight` batches of a
// stream awaiting their ack (the stream is not read further until one is
// answered, so a client that ignores acks holds only its own window); a
// stream that sends nothing for `idle_timeout` is cancelled; a batch the
// writer's queue has no room for ends the stream with RESOURCE_EXHAUSTED.
// Each RESOURCE_EXHAUSTED carries trailing metadata `retry-after-ms`: the
// agent waits that long before its next stream (nothing is lost: what was
// not acknowledged is resent).
#ifndef MERIDIAN_COLLECTOR_INGEST_SERVICE_H_
#define MERIDIAN_COLLECTOR_INGEST_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collector/authorizer.h"
#include "collector/batch_writer.h"
#include "collector/job_ends.h"
#include "meridian/v1/ingest.grpc.pb.h"
#include "wire/batch_validator.h"

namespace meridian {

struct IngestLimits {
  int max_streams = 256;
  size_t max_in_flight = 128;
  absl::Duration idle_timeout = absl::Seconds(60);
  int retry_after_ms = 1000;
};

struct IngestCounters {
  std::atomic<int64_t> batches_stored{0};
  std::atomic<int64_t> batches_duplicate{0};
  std::atomic<int64_t> batches_rejected{0};
  std::atomic<int64_t> spans_stored{0};
  std::atomic<int64_t> spans_invalid{0};    // dropped one by one (span_rules.h)
  std::atomic<int64_t> streams_refused{0};  // over max_streams
  std::atomic<int64_t> streams_idle{0};     // cancelled: idle_timeout
  std::atomic<int64_t> batches_deferred{0};  // the writer's queue was full
};

class IngestService final : public v1::Ingest::Service {
 public:
  // Callers need a token with some write scope, and write scope on every
  // job a batch names (a batch naming another is refused whole).
  // The stream is served raw (RawStream): each message is counted
  // (wire/batch_shape.h) before protobuf parses it.
  IngestService(BatchWriter* writer, std::shared_ptr<const Authorizer> auth,
                IngestLimits limits = {});

  grpc::Status RawStream(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>* stream);

  // Called (on the writer's thread) once a batch is stored (not for a
  // duplicate): with each job it declares a process of (`ended` false),
  // then with each job it ended (true: collector/job_ends.h). Set before
  // serving.
  using OnStored = std::function<void(const std::string& job, bool ended)>;
  void set_on_stored(OnStored on_stored) { on_stored_ = std::move(on_stored); }

  const IngestCounters& counters() const { return counters_; }
  // Ingest streams open now.
  int streams() const { return streams_.load(); }
  // Spans of stored batches by job, for --metrics (at most kMaxJobsCounted
  // jobs are named; the others are counted under "(other)").
  static constexpr size_t kMaxJobsCounted = 1000;
  std::vector<std::pair<std::string, double>> SpansByJob() const;

 private:
  // What a batch holds of each job: its spans, and the processes it
  // declares (collector/job_ends.h), taken before it is handed on.
  struct BatchJobs {
    std::map<std::string, int64_t> spans;
    std::vector<DeclaredProcess> processes;
  };
  static BatchJobs JobsOf(const v1::Batch& batch,
                          const std::vector<SpanColumns>& decoded);
  // Once the batch is stored: counts its spans by job, and tells on_stored_.
  void Stored(const BatchJobs& jobs);
  // RawStream's steps for one batch. Admit: OK if the batch was parsed
  // (`refused` empty), is valid (ValidateBatch, decoding it into `decoded`)
  // and its sender may write it (its agent id, each of its jobs).
  // CountRepairs: the spans ValidateBatch dropped, counted, logged and told
  // in `ack`. Written: counts the writer's result (a stored batch's spans
  // through Stored).
  absl::Status Admit(const grpc::ServerContext& context,
                     const std::string& peer, const std::string& refused,
                     v1::Batch* batch, std::vector<SpanColumns>* decoded,
                     BatchRepairs* repairs);
  void CountRepairs(const BatchRepairs& repairs, const v1::Batch& batch,
                    const std::string& peer, v1::Ack* ack);
  void Written(const BatchJobs& jobs,
               const absl::StatusOr<BatchWriteResult>& result);

  BatchWriter* writer_;
  const std::shared_ptr<const Authorizer> auth_;
  const IngestLimits limits_;
  std::atomic<int> streams_{0};
  OnStored on_stored_;
  IngestCounters counters_;
  mutable absl::Mutex jobs_mu_;
  std::map<std::string, int64_t> spans_by_job_ ABSL_GUARDED_BY(jobs_mu_);
  JobEnds job_ends_ ABSL_GUARDED_BY(jobs_mu_);
};

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_INGEST_SERVICE_H_
