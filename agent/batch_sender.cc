#include "agent/batch_sender.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "spdlog/spdlog.h"
#include "wire/batch_spans.h"

namespace meridian {
namespace {

constexpr size_t kRound = 64;

}  // namespace

BatchSender::BatchSender(std::shared_ptr<grpc::Channel> channel, Spool* spool,
                         std::function<void()> on_progress,
                         absl::Duration ack_timeout)
    : client_(std::move(channel)),
      ack_timeout_(ack_timeout),
      spool_(spool),
      on_progress_(std::move(on_progress)),
      thread_([this] { Loop(); }) {}

BatchSender::~BatchSender() { Stop(); }

void BatchSender::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  // A round waiting on the collector ends now; its batches are queued again.
  client_.Cancel();
  if (thread_.joinable()) thread_.join();
}

void BatchSender::Enqueue(uint64_t spool_id, v1::Batch batch) {
  absl::MutexLock lock(&mu_);
  state_.queued_batches += 1;
  state_.queued_spans += SpanCount(batch);
  if (spool_id == 0) {
    state_.memory_batches += 1;
  } else {
    state_.spooled_spans += SpanCount(batch);
    CountJobs(batch, &JobDelivery::spooled, true);
  }
  const bool spooled = spool_id != 0;
  queue_.push_back({spool_id, std::move(batch), true, 0, spooled});
}

void BatchSender::CountJobs(const v1::Batch& batch,
                            uint64_t JobDelivery::*field, bool add) {
  for (const auto& [name, spans] : SpansByJob(batch)) {
    auto it = jobs_.find(name);
    if (it == jobs_.end()) {
      if (!add) continue;  // forgotten since
      if (jobs_.size() >= kJobs) {
        // The one counted least recently goes.
        auto oldest = jobs_.begin();
        for (auto j = jobs_.begin(); j != jobs_.end(); ++j) {
          if (j->second.used < oldest->second.used) oldest = j;
        }
        jobs_.erase(oldest);
      }
      it = jobs_.emplace(name, JobEntry()).first;
    }
    it->second.used = ++job_clock_;
    uint64_t& n = it->second.delivery.*field;
    const uint64_t count = static_cast<uint64_t>(spans);
    n = add ? n + count : n - std::min(n, count);
  }
}

BatchSender::JobDelivery BatchSender::job(const std::string& job) const {
  absl::MutexLock lock(&mu_);
  auto it = jobs_.find(job);
  return it == jobs_.end() ? JobDelivery() : it->second.delivery;
}

void BatchSender::EnqueueSpooled(const Spool::Recovered& recovered) {
  absl::MutexLock lock(&mu_);
  state_.queued_batches += 1;
  state_.queued_spans += recovered.spans;
  state_.spooled_spans += recovered.spans;
  queue_.push_back({recovered.id, {}, /*loaded=*/false, recovered.spans});
}

void BatchSender::Load(std::deque<Queued>* round,
                       std::vector<v1::Batch>* batches) {
  for (size_t i = 0; i < round->size();) {
    Queued& q = (*round)[i];
    if (q.loaded) {
      ++i;
      continue;
    }
    absl::StatusOr<v1::Batch> batch = spool_->Read(q.id);
    if (batch.ok()) {
      (*batches)[i] = std::move(*batch);
      q.loaded = true;
      ++i;
      continue;
    }
    spdlog::error("lost {} spooled spans: {}", q.spans,
                  std::string(batch.status().message()));
    spool_->Remove(q.id).IgnoreError();
    {
      absl::MutexLock lock(&mu_);
      state_.queued_batches -= 1;
      state_.queued_spans -= q.spans;
      state_.spooled_spans -= q.spans;
      state_.lost_spans += q.spans;
    }
    round->erase(round->begin() + i);
    batches->erase(batches->begin() + i);
  }
}

std::vector<uint64_t> BatchSender::TakeDelivered() {
  absl::MutexLock lock(&mu_);
  std::vector<uint64_t> out;
  out.swap(delivered_);
  return out;
}

absl::Status BatchSender::Spill(
    const std::function<absl::StatusOr<uint64_t>(const v1::Batch&)>& spool,
    const std::function<void(uint64_t)>& spilled) {
  absl::MutexLock lock(&mu_);
  for (Queued& queued : queue_) {
    if (queued.id != 0) continue;
    absl::StatusOr<uint64_t> id = spool(queued.batch);
    if (!id.ok()) return id.status();
    queued.id = *id;
    state_.memory_batches -= 1;
    state_.spooled_spans += SpanCount(queued.batch);
    CountJobs(queued.batch, &JobDelivery::spooled, true);
    queued.in_job_spooled = true;
    spilled(queued.batch.batch_seq());
  }
  return absl::OkStatus();
}

BatchSender::State BatchSender::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

void BatchSender::CountDelivered(const std::deque<Queued>& round,
                                 const std::vector<v1::Batch>& batches,
                                 const SendReport& report) {
  uint64_t spans = 0, rejected = 0;
  for (const v1::Batch& b : batches) spans += SpanCount(b);
  std::vector<bool> is_rejected(batches.size());
  for (size_t i : report.rejected_batches) {
    rejected += SpanCount(batches[i]);
    is_rejected[i] = true;
  }
  for (size_t i = 0; i < batches.size(); ++i) {
    CountJobs(batches[i],
              is_rejected[i] ? &JobDelivery::rejected : &JobDelivery::sent,
              true);
    if (round[i].in_job_spooled) {
      CountJobs(batches[i], &JobDelivery::spooled, false);
    }
  }
  for (size_t i = 0; i < round.size(); ++i) {
    if (round[i].id != 0) {
      state_.spooled_spans -= SpanCount(batches[i]);
      continue;
    }
    delivered_.push_back(round[i].batch.batch_seq());
    state_.memory_batches -= 1;
  }
  state_.queued_batches -= batches.size();
  state_.queued_spans -= spans;
  state_.sent_spans += spans - rejected - report.spans_invalid;
  state_.rejected_spans += rejected;
  state_.invalid_spans += report.spans_invalid;
  state_.unreachable = false;
}

void BatchSender::Loop() {
  int backoff_ms = 100;
  for (;;) {
    // The round is moved out of the queue (no copy of the batches) and put
    // back in front if it fails.
    std::deque<Queued> round;
    std::vector<v1::Batch> batches;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stop_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (stop_) return;
      while (!queue_.empty() && batches.size() < kRound) {
        Queued& front = queue_.front();
        batches.push_back(std::move(front.batch));
        round.push_back(
            {front.id, {}, front.loaded, front.spans, front.in_job_spooled});
        queue_.pop_front();
      }
      // Sequence numbers of the in-memory ones, kept for TakeDelivered.
      for (size_t i = 0; i < round.size(); ++i) {
        if (round[i].id == 0)
          round[i].batch.set_batch_seq(batches[i].batch_seq());
      }
    }
    Load(&round, &batches);
    if (batches.empty()) continue;
    SendOptions options;
    options.max_streams = 1;
    options.ack_timeout = ack_timeout_;
    absl::StatusOr<SendReport> report = client_.SendAll(batches, options);
    bool was_unreachable;
    bool stopping;
    {
      absl::MutexLock lock(&mu_);
      was_unreachable = state_.unreachable;
      stopping = stop_;
      if (report.ok()) {
        CountDelivered(round, batches, *report);
        backoff_ms = 100;
      } else {
        for (size_t i = batches.size(); i-- > 0;) {
          round[i].batch = std::move(batches[i]);
          queue_.push_front(std::move(round[i]));
        }
        state_.unreachable = true;
      }
    }
    if (report.ok()) {
      for (const std::string& why : report->rejections) {
        spdlog::error("the collector rejected a batch: {}", why);
      }
      for (const std::string& why : report->invalid_reasons) {
        spdlog::warn("the collector dropped invalid spans; the first: {}", why);
      }
      if (was_unreachable) spdlog::info("the collector is reachable again");
      for (const Queued& sent : round) {
        if (sent.id != 0) spool_->Remove(sent.id).IgnoreError();
      }
    } else if (!was_unreachable && !stopping) {
      spdlog::warn("cannot deliver to the collector ({}); spooling",
                   std::string(report.status().message()));
    }
    on_progress_();
    if (!report.ok()) {
      // Backoff before the next attempt; Stop() ends it early.
      absl::MutexLock lock(&mu_);
      auto stopping = [this]()
                          ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
      // A collector that is full says how long to wait (retry-after-ms).
      const int64_t wait =
          std::max<int64_t>(backoff_ms, client_.retry_after_ms());
      mu_.AwaitWithTimeout(absl::Condition(&stopping),
                           absl::Milliseconds(wait));
      backoff_ms = std::min(backoff_ms * 2, 2000);
    }
  }
}

}  // namespace meridian
