// IngestClient: sends batches to a collector's Ingest/Stream and returns once
// every batch is acknowledged.
//
// Batches are pipelined: up to `window` are sent before their acks arrive.
// If the stream breaks (collector restarted, store failure, network), a new
// stream is opened after a short backoff and every unacknowledged batch is
// sent again; the collector's exactly-once rule (agent_id, batch_seq) makes
// that safe. Rejected batches are reported, not resent.
#ifndef MERIDIAN_AGENT_INGEST_CLIENT_H_
#define MERIDIAN_AGENT_INGEST_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "meridian/v1/ingest.grpc.pb.h"

namespace meridian {

struct SendReport {
  int64_t stored = 0;
  int64_t duplicate = 0;
  int64_t rejected = 0;
  int64_t spans_stored = 0;
  int streams = 0;                      // streams opened (1 + reconnects)
  std::vector<std::string> rejections;  // the collector's reasons
};

struct SendOptions {
  int window = 64;
  int max_streams = 8;  // give up (UNAVAILABLE) after this many streams
};

class IngestClient {
 public:
  explicit IngestClient(std::shared_ptr<grpc::Channel> channel);

  absl::StatusOr<SendReport> SendAll(const std::vector<v1::Batch>& batches,
                                     const SendOptions& options = {});

 private:
  std::unique_ptr<v1::Ingest::Stub> stub_;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_INGEST_CLIENT_H_
