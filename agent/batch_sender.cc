#include "agent/batch_sender.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/time/time.h"

namespace meridian {
namespace {

constexpr size_t kRound = 64;

}  // namespace

BatchSender::BatchSender(std::shared_ptr<grpc::Channel> channel, Spool* spool,
                         std::function<void()> on_progress)
    : client_(std::move(channel)),
      spool_(spool),
      on_progress_(std::move(on_progress)),
      thread_([this] { Loop(); }) {}

BatchSender::~BatchSender() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void BatchSender::Enqueue(uint64_t spool_id, v1::Batch batch) {
  absl::MutexLock lock(&mu_);
  state_.queued_batches += 1;
  state_.queued_spans += batch.spans_size();
  queue_.push_back({spool_id, std::move(batch)});
}

BatchSender::State BatchSender::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

void BatchSender::Loop() {
  int backoff_ms = 100;
  for (;;) {
    std::vector<v1::Batch> round;
    std::vector<uint64_t> ids;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (stop_) return;
      for (size_t i = 0; i < queue_.size() && i < kRound; ++i) {
        round.push_back(queue_[i].batch);
        ids.push_back(queue_[i].id);
      }
    }
    SendOptions options;
    options.max_streams = 1;
    absl::StatusOr<SendReport> report = client_.SendAll(round, options);
    {
      absl::MutexLock lock(&mu_);
      if (report.ok()) {
        for (size_t i = 0; i < round.size(); ++i) queue_.pop_front();
        uint64_t spans = 0;
        for (const v1::Batch& b : round) spans += b.spans_size();
        state_.queued_batches -= round.size();
        state_.queued_spans -= spans;
        uint64_t rejected = 0;
        for (size_t i : report->rejected_batches) {
          rejected += round[i].spans_size();
        }
        state_.sent_spans += spans - rejected;
        state_.rejected_spans += rejected;
        if (!report->rejections.empty()) {
          state_.last_error = report->rejections.back();
        }
        state_.unreachable = false;
        backoff_ms = 100;
      } else {
        state_.unreachable = true;
        state_.last_error = std::string(report.status().message());
      }
    }
    if (report.ok()) {
      for (uint64_t id : ids) spool_->Remove(id).IgnoreError();
    }
    on_progress_();
    if (!report.ok()) {
      // Backoff before the next attempt; Stop() ends it early.
      absl::MutexLock lock(&mu_);
      auto stopping = [this]()
                          ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
      mu_.AwaitWithTimeout(absl::Condition(&stopping),
                           absl::Milliseconds(backoff_ms));
      backoff_ms = std::min(backoff_ms * 2, 2000);
    }
  }
}

}  // namespace meridian
