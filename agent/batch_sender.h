// BatchSender: the node agent's stage that delivers spooled batches to the
// collector, in order, and removes each from the spool once acknowledged.
//
// One thread. It sends what is queued in rounds of up to 64 batches over
// one Ingest stream (IngestClient); a round that fails leaves its batches
// queued and marks the collector unreachable until a later round succeeds,
// after a backoff of 100 ms doubling to 2 s. A batch the collector rejects
// is removed too (resending cannot help), counted and logged with the
// collector's reason. `on_progress` is called after every round, so the
// agent can answer waiting flushes.
#ifndef MERIDIAN_AGENT_BATCH_SENDER_H_
#define MERIDIAN_AGENT_BATCH_SENDER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "agent/ingest_client.h"
#include "agent/spool.h"

namespace meridian {

class BatchSender {
 public:
  struct State {
    uint64_t queued_batches = 0;
    uint64_t queued_spans = 0;
    uint64_t sent_spans = 0;  // acknowledged (stored or duplicate)
    uint64_t rejected_spans = 0;
    bool unreachable = false;  // the last round failed
  };

  BatchSender(std::shared_ptr<grpc::Channel> channel, Spool* spool,
              std::function<void()> on_progress);
  ~BatchSender();  // stops the thread; what is queued stays in the spool

  void Enqueue(uint64_t spool_id, v1::Batch batch);
  State state() const;

 private:
  struct Queued {
    uint64_t id;
    v1::Batch batch;
  };
  void Loop();

  IngestClient client_;
  Spool* const spool_;
  const std::function<void()> on_progress_;
  mutable absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  State state_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_BATCH_SENDER_H_
