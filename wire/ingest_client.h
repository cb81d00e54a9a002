// IngestClient: sends batches to a collector's Ingest/Stream and returns once
// every batch is acknowledged.
//
// Batches are pipelined: up to `window` are sent before their acks arrive.
// If the stream breaks (collector restarted, store failure, network), a new
// stream is opened after a short backoff and every unacknowledged batch is
// sent again; the collector's exactly-once rule (agent_id, batch_seq) makes
// that safe. Rejected batches are reported, not resent.
//
// Deadline: a stream on which the collector acknowledges nothing for
// `ack_timeout` (from its start, or from the last ack) is cancelled
// (net/idle_deadline.h), and SendAll ends with DEADLINE_EXCEEDED rather
// than open another: a collector that takes connections and never answers
// holds a sender no longer than that. A stream that makes progress may last
// as long as it needs.
#ifndef MERIDIAN_WIRE_INGEST_CLIENT_H_
#define MERIDIAN_WIRE_INGEST_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "meridian/v1/ingest.grpc.pb.h"

namespace meridian {

struct SendReport {
  int64_t stored = 0;
  int64_t duplicate = 0;
  int64_t rejected = 0;
  int64_t spans_stored = 0;
  // Spans of stored batches the collector dropped as invalid, and the
  // first reason it gave for each such batch.
  int64_t spans_invalid = 0;
  std::vector<std::string> invalid_reasons;
  int streams = 0;                       // streams opened (1 + reconnects)
  std::vector<std::string> rejections;   // the collector's reasons
  std::vector<size_t> rejected_batches;  // their indexes in the batches sent

  // Adds `other`'s counts and reasons to this report.
  void Add(const SendReport& other);
};

struct SendOptions {
  int window = 64;
  int max_streams = 8;  // give up (UNAVAILABLE) after this many streams
  // Give up (DEADLINE_EXCEEDED) when a stream has had no ack for this long.
  absl::Duration ack_timeout = absl::Seconds(10);
};

// SendAll is called from one thread at a time; Cancel from any.
// Whether a send that ended with `code` was refused for good: no token, a
// token without the scope, a server without the service, a request it
// cannot take. Sending again meets the same refusal (SendAll stops at once).
bool IsPermanentRefusal(absl::StatusCode code);

class IngestClient {
 public:
  explicit IngestClient(std::shared_ptr<grpc::Channel> channel);

  absl::StatusOr<SendReport> SendAll(const std::vector<v1::Batch>& batches,
                                     const SendOptions& options = {});
  // Ends the SendAll under way at once (its stream cancelled, its backoff
  // cut short) and makes every later one fail at once, both with
  // CANCELLED: for a sender that is stopping.
  void Cancel();
  // How long the collector asked to wait before the next stream, when the
  // last SendAll's last stream ended with RESOURCE_EXHAUSTED
  // (`retry-after-ms` trailing metadata); 0 otherwise.
  int64_t retry_after_ms() const { return retry_after_ms_; }

 private:
  // Opens a stream for `context` unless Cancel() was called: false then.
  bool Begin(grpc::ClientContext* context);
  void End();
  // One stream of SendAll: sends batches[i] for each i of `todo` (in that
  // order, at most options.window unacknowledged), marking each acked and
  // counting its ack in `report`; `expired` if no ack came for
  // options.ack_timeout. Returns the stream's status.
  grpc::Status Stream(grpc::ClientContext* context,
                      const std::vector<v1::Batch>& batches,
                      const std::vector<size_t>& todo,
                      const SendOptions& options, std::vector<bool>* acked,
                      SendReport* report, bool* expired);

  std::unique_ptr<v1::Ingest::Stub> stub_;
  int64_t retry_after_ms_ = 0;
  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* in_flight_ ABSL_GUARDED_BY(mu_) = nullptr;
};

// Sends the batches of several agents at once, each on its own channel
// (from `connect`) and stream, as the agents of several nodes do. Agent i
// sends its batches passes[i] times (every pass after the first is a resend);
// an empty `passes` means once each. Returns each agent's report (summed over
// its passes) or its error, in agent order.
std::vector<absl::StatusOr<SendReport>> SendConcurrently(
    const std::function<std::shared_ptr<grpc::Channel>()>& connect,
    const std::vector<std::vector<v1::Batch>>& agents,
    const std::vector<int>& passes = {});

}  // namespace meridian

#endif  // MERIDIAN_WIRE_INGEST_CLIENT_H_
