// JobRefresher: brings a job's stored results (its clock solution and step
// summaries) up to date in the background as its batches arrive, so that a
// query of a finished job reads them and solves nothing.
//
// Contract:
//   - Changed(job) is called once a batch of `job` is stored (and for each
//     stored job when the collector starts). It never blocks on the refresh
//     work (a short lock).
//   - A job is refreshed (`refresh(job, true, cancel)`) once no batch of it
//     has arrived for `quiet`, or at once after Ended(job): every process
//     of it has ended (collector/job_ends.h), so nothing more is coming. A
//     Changed(job) after Ended(job) waits for `quiet` again. A job that keeps
//     changing gets `refresh(job, false, cancel)` at most every
//     `summarise_every` (zero: never; only once quiet). The collector's refresh
//     does the same work for both (the new steps' summaries, the clocks from
//     the chunks written since); `whole` says which it is.
//   - One job is refreshed at a time, on the refresher's own thread, which
//     runs at a lower scheduling priority (nice +10) than the collector's
//     ingest and queries: on a machine shared with the job, the job goes
//     first.
//   - The jobs waiting are bounded (`max_jobs`): a change of a job beyond it
//     is dropped and counted (that job is solved by its first query, as
//     without the refresher).
//   - A failed refresh is counted and logged; the refresher goes on.
//   - Shutdown() (also the destructor) stops the refresh in progress (it
//     sets the `cancel` that refresh was handed, which the refresh checks
//     as it goes, and waits for it to return), drops those waiting, and
//     stops. A refresh stopped so (it returned CANCELLED) is neither
//     refreshed nor failed, and its time is not counted; what it had not
//     stored is made again by the next refresh or query.
#ifndef MERIDIAN_COLLECTOR_JOB_REFRESHER_H_
#define MERIDIAN_COLLECTOR_JOB_REFRESHER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace meridian {

struct RefreshCounters {
  int64_t refreshed = 0;  // refreshes that succeeded
  int64_t failed = 0;     // refreshes that failed
  int64_t dropped = 0;    // changes dropped: max_jobs already waiting
  double seconds = 0;     // time spent refreshing
  int64_t waiting = 0;    // jobs waiting now, or being refreshed
};

class JobRefresher {
 public:
  // `whole`: the job has gone quiet (else it is still changing). `cancel`
  // becomes true when Shutdown() is called: return soon after, CANCELLED
  // if the work was cut short.
  using Refresh = std::function<absl::Status(const std::string& job, bool whole,
                                             const std::atomic<bool>& cancel)>;
  JobRefresher(Refresh refresh, absl::Duration quiet,
               absl::Duration summarise_every, size_t max_jobs = 4096);
  ~JobRefresher();
  JobRefresher(const JobRefresher&) = delete;
  JobRefresher& operator=(const JobRefresher&) = delete;

  void Changed(const std::string& job);
  // `job`'s processes have all ended: refreshed whole as soon as the thread
  // is free (a job not waiting is added, as by Changed).
  void Ended(const std::string& job);
  RefreshCounters counters() const;
  // Waits until no job is waiting or being refreshed, or `timeout`; true if
  // idle. For tests and benchmarks.
  bool WaitIdle(absl::Duration timeout);
  // Waits until `n` refreshes have ended (done or failed), or `timeout`;
  // true if they have. For tests.
  bool WaitEnded(int64_t n, absl::Duration timeout);
  void Shutdown();

 private:
  struct Waiting {
    absl::Time changed;         // its last change
    absl::Time last_summaries;  // its last refresh (or first change)
    bool ended = false;         // Ended() since its last change
  };
  void Note(const std::string& job, bool ended);
  void Run();
  // The job due first, and whether it is due whole; nullopt if none is due
  // yet, with `next` set to when the first will be (InfiniteFuture: none
  // waiting).
  std::optional<std::string> Due(absl::Time now, bool* whole,
                                 absl::Time* next) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Refresh refresh_;
  const absl::Duration quiet_;
  const absl::Duration summarise_every_;
  const size_t max_jobs_;
  mutable absl::Mutex mu_;
  std::map<std::string, Waiting> waiting_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> cancel_{false};  // set by Shutdown: see Refresh
  absl::CondVar wake_;               // a change, or Shutdown
  RefreshCounters counters_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_JOB_REFRESHER_H_
