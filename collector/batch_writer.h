// BatchWriter: the collector's single writer. Batches submitted from any
// number of ingest streams are committed by one thread, as many as are
// waiting in one transaction (group commit), so one fsync serves them all.
//
// Contract:
//   - Submit() never blocks on the disk. `done` is called exactly once, on
//     the writer thread, after the batch's transaction committed (with its
//     BatchWriteResult) or failed (with the error; nothing of it was stored).
//   - Batches are committed in the order they were submitted.
//   - Shutdown() (also run by the destructor) commits everything submitted
//     before it, then stops; Submit() after Shutdown() fails at once with
//     UNAVAILABLE.
//   - A failed transaction fails only the batches in it; the writer keeps
//     serving later ones.
//   - The queue is bounded: Submit() of a batch that would take the bytes
//     queued past `max_queue_bytes` (its serialized size, the measure of
//     what it holds in memory) fails at once with RESOURCE_EXHAUSTED and
//     `done` is never called; the caller tells its client to retry later.
//     A batch larger than the bound is taken when the queue is empty.
#ifndef MERIDIAN_COLLECTOR_BATCH_WRITER_H_
#define MERIDIAN_COLLECTOR_BATCH_WRITER_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "meridian/v1/span.pb.h"
#include "store/store.h"
#include "wire/span_chunk.h"

namespace meridian {

// Commit latencies (one sample per transaction), for --metrics: counts per
// upper bound in seconds, as a Prometheus histogram wants them.
struct CommitLatencies {
  static constexpr double kBounds[] = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
                                       0.1,   0.2,   0.5,   1,    2,    5};
  static constexpr size_t kBuckets = sizeof(kBounds) / sizeof(kBounds[0]);
  uint64_t counts[kBuckets + 1] = {};  // [kBuckets]: above the last bound
  uint64_t samples = 0;
  double sum_seconds = 0;
};

class BatchWriter {
 public:
  using Done = std::function<void(absl::StatusOr<BatchWriteResult>)>;

  // At most `max_group_spans` spans go into one transaction (a single larger
  // batch still goes alone).
  explicit BatchWriter(std::unique_ptr<Store> store,
                       size_t max_group_spans = 200000,
                       size_t max_queue_bytes = 256 << 20);
  ~BatchWriter();
  BatchWriter(const BatchWriter&) = delete;
  BatchWriter& operator=(const BatchWriter&) = delete;

  // `decoded`: the batch's chunks as ValidateBatch decoded them (or empty:
  // the store decodes them).
  absl::Status Submit(std::shared_ptr<const v1::Batch> batch, Done done,
                      std::vector<SpanColumns> decoded = {});
  // Bytes of the batches queued and not yet committed.
  size_t queued_bytes() const;
  CommitLatencies commit_latencies() const;
  void Shutdown();

  // Runs `task` on the writer thread with the store, between transactions
  // and in order with the batches submitted before it (deleting a job,
  // retention). False, and never run, after Shutdown().
  using Task = std::function<void(Store& store)>;
  bool Schedule(Task task);

 private:
  struct Item {
    std::shared_ptr<const v1::Batch> batch;
    Done done;
    std::vector<SpanColumns> decoded;
    size_t bytes;
    Task task;  // set: a task, not a batch
  };
  void Run();

  std::unique_ptr<Store> store_;
  const size_t max_group_spans_;
  const size_t max_queue_bytes_;
  mutable absl::Mutex mu_;
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  CommitLatencies latencies_ ABSL_GUARDED_BY(mu_);
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_BATCH_WRITER_H_
