#include "collector/batch_writer.h"

#include <pthread.h>

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "wire/batch_spans.h"

namespace meridian {

BatchWriter::BatchWriter(std::unique_ptr<Store> store, size_t max_group_spans,
                         size_t max_queue_bytes)
    : store_(std::move(store)),
      max_group_spans_(max_group_spans),
      max_queue_bytes_(max_queue_bytes),
      thread_([this] { Run(); }) {}

BatchWriter::~BatchWriter() { Shutdown(); }

absl::Status BatchWriter::Submit(std::shared_ptr<const v1::Batch> batch,
                                 Done done, std::vector<SpanColumns> decoded) {
  const size_t bytes = batch->ByteSizeLong();
  {
    absl::MutexLock lock(&mu_);
    if (!stopping_) {
      if (queued_bytes_ > 0 && queued_bytes_ + bytes > max_queue_bytes_) {
        return absl::ResourceExhaustedError(
            absl::StrCat("the collector's write queue is full (", queued_bytes_,
                         " bytes waiting to be committed)"));
      }
      queued_bytes_ += bytes;
      queue_.push_back(
          {std::move(batch), std::move(done), std::move(decoded), bytes});
      return absl::OkStatus();
    }
  }
  done(absl::UnavailableError("the collector is shutting down"));
  return absl::OkStatus();
}

CommitLatencies BatchWriter::commit_latencies() const {
  absl::MutexLock lock(&mu_);
  return latencies_;
}

size_t BatchWriter::queued_bytes() const {
  absl::MutexLock lock(&mu_);
  return queued_bytes_;
}

void BatchWriter::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

bool BatchWriter::Schedule(Task task) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return false;
  Item item;
  item.bytes = 0;
  item.task = std::move(task);
  queue_.push_back(std::move(item));
  return true;
}

void BatchWriter::Run() {
  // Named, so that its CPU can be told apart (top -H, /proc/PID/task).
  pthread_setname_np(pthread_self(), "store-writer");
  std::vector<Item> group;
  Task task;
  std::vector<const v1::Batch*> batches;
  std::vector<std::vector<SpanColumns>*> decoded;
  while (true) {
    group.clear();
    if (task) {
      task(*store_);
      task = nullptr;
    }
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](BatchWriter* w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(w->mu_) {
            return w->stopping_ || !w->queue_.empty();
          },
          this));
      if (queue_.empty()) return;  // stopping, and everything is committed
      if (queue_.front().task) {
        task = std::move(queue_.front().task);
        queue_.pop_front();
      }
      size_t spans = 0;
      while (!task && !queue_.empty() && !queue_.front().task &&
             (group.empty() ||
              spans + SpanCount(*queue_.front().batch) <= max_group_spans_)) {
        spans += SpanCount(*queue_.front().batch);
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    if (group.empty()) continue;  // a task: run at the top of the loop
    batches.clear();
    decoded.clear();
    for (Item& item : group) {
      batches.push_back(item.batch.get());
      decoded.push_back(&item.decoded);
    }
    const absl::Time begin = absl::Now();
    absl::StatusOr<std::vector<BatchWriteResult>> results =
        store_->Write(batches, decoded);
    const double seconds = absl::ToDoubleSeconds(absl::Now() - begin);
    {
      absl::MutexLock lock(&mu_);
      size_t bucket = 0;
      while (bucket < CommitLatencies::kBuckets &&
             seconds > CommitLatencies::kBounds[bucket]) {
        ++bucket;
      }
      ++latencies_.counts[bucket];
      ++latencies_.samples;
      latencies_.sum_seconds += seconds;
      for (const Item& item : group) queued_bytes_ -= item.bytes;
    }
    for (size_t i = 0; i < group.size(); ++i) {
      if (results.ok()) {
        group[i].done((*results)[i]);
      } else {
        group[i].done(results.status());
      }
    }
  }
}

}  // namespace meridian
