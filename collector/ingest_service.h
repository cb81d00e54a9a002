// IngestService: the collector's side of meridian.v1.Ingest/Stream.
//
// For each batch on a stream: ValidateBatch(); an invalid batch is answered
// RESULT_REJECTED with the validator's message and the stream goes on; a
// valid one goes to the BatchWriter and is answered RESULT_STORED or
// RESULT_DUPLICATE once committed. Acks are written in the order the batches
// arrived. If a commit fails, the stream ends with UNAVAILABLE and no ack for
// what failed, so the agent resends it on a new stream.
#ifndef MERIDIAN_COLLECTOR_INGEST_SERVICE_H_
#define MERIDIAN_COLLECTOR_INGEST_SERVICE_H_

#include <atomic>
#include <cstdint>

#include "collector/batch_writer.h"
#include "meridian/v1/ingest.grpc.pb.h"

namespace meridian {

struct IngestCounters {
  std::atomic<int64_t> batches_stored{0};
  std::atomic<int64_t> batches_duplicate{0};
  std::atomic<int64_t> batches_rejected{0};
  std::atomic<int64_t> spans_stored{0};
  std::atomic<int64_t> spans_invalid{0};  // dropped one by one (span_rules.h)
};

class IngestService final : public v1::Ingest::Service {
 public:
  explicit IngestService(BatchWriter* writer) : writer_(writer) {}

  grpc::Status Stream(
      grpc::ServerContext* context,
      grpc::ServerReaderWriter<v1::Ack, v1::Batch>* stream) override;

  const IngestCounters& counters() const { return counters_; }

 private:
  BatchWriter* writer_;
  IngestCounters counters_;
};

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_INGEST_SERVICE_H_
