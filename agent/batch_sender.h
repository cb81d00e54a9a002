// BatchSender: the node agent's stage that delivers batches to the
// collector, in order. A batch is queued either in memory only (spool id 0:
// its records are still in the probes' rings, released by the agent once
// TakeDelivered reports it) or already in the spool (removed from it once
// acknowledged).
//
// One thread. It sends what is queued in rounds of up to 64 batches over
// one Ingest stream (IngestClient); a round that fails leaves its batches
// queued and marks the collector unreachable until a later round succeeds,
// after a backoff of 100 ms doubling to 2 s. A round fails too when the
// collector acknowledges nothing for `ack_timeout` (a collector that takes
// connections and never answers), and Stop() cancels the round under way:
// neither a silent collector nor a stop waits on the network. A batch the
// collector rejects is done with too (resending cannot help), counted and
// logged with the collector's reason. `on_progress` is called after every
// round, so the agent can release ring records and answer waiting flushes.
#ifndef MERIDIAN_AGENT_BATCH_SENDER_H_
#define MERIDIAN_AGENT_BATCH_SENDER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/spool.h"
#include "wire/ingest_client.h"

namespace meridian {

class BatchSender {
 public:
  struct State {
    uint64_t queued_batches = 0;
    uint64_t queued_spans = 0;
    uint64_t sent_spans = 0;  // acknowledged (stored or duplicate)
    uint64_t rejected_spans = 0;
    uint64_t invalid_spans = 0;   // in stored batches, dropped one by one
    uint64_t memory_batches = 0;  // queued and not in the spool
    uint64_t spooled_spans = 0;   // queued and in the spool
    uint64_t lost_spans = 0;      // spooled files that no longer read
    bool unreachable = false;     // the last round failed
  };

  BatchSender(std::shared_ptr<grpc::Channel> channel, Spool* spool,
              std::function<void()> on_progress,
              absl::Duration ack_timeout = absl::Seconds(10));
  ~BatchSender();  // Stop()s

  // `spool_id` 0: the batch is in memory only.
  void Enqueue(uint64_t spool_id, v1::Batch batch);
  // A batch an earlier agent spooled: read from the spool only when its
  // turn comes, so a large spool is never all in memory.
  void EnqueueSpooled(const Spool::Recovered& recovered);
  State state() const;

  // What became of one job's spans, from its share of each batch
  // (SpansByJob): `meridian run`'s summary of its own job. Kept for the
  // kJobs jobs counted last; an older one reads as nothing.
  struct JobDelivery {
    uint64_t sent = 0;  // acknowledged, in batches not rejected
    uint64_t rejected = 0;
    uint64_t spooled = 0;  // queued and in this agent's spool (not those an
                           // earlier agent spooled)
  };
  static constexpr size_t kJobs = 64;
  JobDelivery job(const std::string& job) const;

  // The batch_seq of each in-memory batch that is done with (stored,
  // duplicate or rejected) since the last call, in queue order.
  std::vector<uint64_t> TakeDelivered();

  // Writes each in-memory batch still queued (not in a round being sent),
  // oldest first, with `spool`, which returns its spool id; stops at the
  // first error, which it returns. Calls `spilled` with each batch_seq
  // written. For an unreachable collector, and when stopping.
  absl::Status Spill(
      const std::function<absl::StatusOr<uint64_t>(const v1::Batch&)>& spool,
      const std::function<void(uint64_t)>& spilled);

  // Ends the thread at once: the round under way, if any, is cancelled and
  // its batches stay queued with the rest (Spill them).
  void Stop();

 private:
  struct Queued {
    uint64_t id;
    v1::Batch batch;
    bool loaded = true;  // false: a recovered spool file, read when sent
    uint64_t spans = 0;  // of an unloaded one
    bool in_job_spooled = false;  // counted in its jobs' JobDelivery::spooled
  };
  // Adds `batch`'s spans to its jobs' `field`, or takes them off.
  void CountJobs(const v1::Batch& batch, uint64_t JobDelivery::*field, bool add)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads the round's unloaded batches from the spool; drops (and counts
  // as lost) those that no longer read.
  void Load(std::deque<Queued>* round, std::vector<v1::Batch>* batches);
  // A round delivered (`report`): its spans counted sent, rejected or
  // invalid, per job too; its in-memory batches' sequences kept for
  // TakeDelivered.
  void CountDelivered(const std::deque<Queued>& round,
                      const std::vector<v1::Batch>& batches,
                      const SendReport& report)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Loop();

  IngestClient client_;
  const absl::Duration ack_timeout_;
  Spool* const spool_;
  const std::function<void()> on_progress_;
  mutable absl::Mutex mu_;
  std::deque<Queued> queue_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> delivered_ ABSL_GUARDED_BY(mu_);
  State state_ ABSL_GUARDED_BY(mu_);
  struct JobEntry {
    JobDelivery delivery;
    uint64_t used = 0;  // job_clock_ when last counted
  };
  std::map<std::string, JobEntry> jobs_ ABSL_GUARDED_BY(mu_);
  uint64_t job_clock_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_BATCH_SENDER_H_
