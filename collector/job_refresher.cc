#include "collector/job_refresher.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

#include "spdlog/spdlog.h"

namespace meridian {

JobRefresher::JobRefresher(Refresh refresh, absl::Duration quiet,
                           absl::Duration summarise_every, size_t max_jobs)
    : refresh_(std::move(refresh)),
      quiet_(quiet),
      summarise_every_(summarise_every),
      max_jobs_(max_jobs),
      thread_([this] { Run(); }) {}

JobRefresher::~JobRefresher() { Shutdown(); }

void JobRefresher::Changed(const std::string& job) { Note(job, false); }

void JobRefresher::Ended(const std::string& job) { Note(job, true); }

void JobRefresher::Note(const std::string& job, bool ended) {
  const absl::Time now = absl::Now();
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  auto it = waiting_.find(job);
  if (it != waiting_.end()) {
    it->second.changed = now;
    it->second.ended = ended;
    if (ended) wake_.Signal();  // due now, not at the time it waits for
    return;
  }
  if (waiting_.size() >= max_jobs_) {
    ++counters_.dropped;
    return;
  }
  waiting_.emplace(job, Waiting{now, now, ended});
  wake_.Signal();
}

RefreshCounters JobRefresher::counters() const {
  absl::MutexLock lock(&mu_);
  RefreshCounters counters = counters_;
  counters.waiting = static_cast<int64_t>(waiting_.size()) + (busy_ ? 1 : 0);
  return counters;
}

bool JobRefresher::WaitIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return waiting_.empty() && !busy_;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

bool JobRefresher::WaitEnded(int64_t n, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto ended = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return counters_.refreshed + counters_.failed >= n;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&ended), timeout);
}

void JobRefresher::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    cancel_.store(true);
    waiting_.clear();
    wake_.Signal();
  }
  thread_.join();
}

std::optional<std::string> JobRefresher::Due(absl::Time now, bool* whole,
                                             absl::Time* next) const {
  std::optional<std::string> due;
  absl::Time due_at = absl::InfiniteFuture();
  *next = absl::InfiniteFuture();
  for (const auto& [job, waiting] : waiting_) {
    // An ended job is due whole at once, with no summaries-only pass first.
    absl::Time at = waiting.ended ? waiting.changed : waiting.changed + quiet_;
    bool is_whole = true;
    if (!waiting.ended && summarise_every_ > absl::ZeroDuration() &&
        waiting.last_summaries + summarise_every_ < at) {
      at = waiting.last_summaries + summarise_every_;
      is_whole = false;
    }
    if (at <= now && at < due_at) {
      due = job;
      due_at = at;
      *whole = is_whole;
    }
    *next = std::min(*next, at);
  }
  return due;
}

void JobRefresher::Run() {
  // Below the collector's other threads (Linux: per thread). Failing to
  // lower it is harmless.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
  // Named, so that its CPU can be told apart (top -H, /proc/PID/task; the
  // colocated bench reports it).
  pthread_setname_np(pthread_self(), "refresh");
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    const absl::Time now = absl::Now();
    bool whole = false;
    absl::Time next;
    std::optional<std::string> job = Due(now, &whole, &next);
    if (!job) {
      wake_.WaitWithDeadline(&mu_, next);
      continue;
    }
    if (whole) {
      waiting_.erase(*job);  // a change from now on waits again
    } else {
      waiting_[*job].last_summaries = now;
    }
    busy_ = true;
    mu_.Unlock();
    const absl::Time start = absl::Now();
    absl::Status refreshed = refresh_(*job, whole, cancel_);
    const absl::Duration took = absl::Now() - start;
    const bool stopped = absl::IsCancelled(refreshed) && cancel_.load();
    if (stopped) {
      spdlog::info("refreshing job {}: stopped by the shutdown", *job);
    } else if (!refreshed.ok()) {
      spdlog::warn("refreshing job {}'s stored results: {}", *job,
                   std::string(refreshed.message()));
    }
    mu_.Lock();
    busy_ = false;
    if (stopped) break;
    ++(refreshed.ok() ? counters_.refreshed : counters_.failed);
    counters_.seconds += absl::ToDoubleSeconds(took);
  }
}

}  // namespace meridian
