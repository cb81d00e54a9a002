// StallWatch: the collector's own look, every second, at the jobs on its
// activity board (docs/health.md), for what cannot wait for someone to ask:
// the metric meridian_job_stalled_seconds{job} and the --on-stall hook, and
// the --on-slowdown hook over the SlowdownWatch's slowdowns.
//
// Contract:
//   - Check() diagnoses every job on the board with `stall_after_ns`
//     (query/analysis/job_health.h). A job entering the stalled state runs
//     `on_stall` (if set) once: `/bin/sh -c ON_STALL` with MERIDIAN_JOB set
//     to the job and `meridian health --json`'s answer on its stdin (from a
//     memory file, so a hook that does not read cannot block the
//     collector), its output the collector's. The job must leave the
//     stalled state (progress, or its processes gone) before the hook runs
//     again for it. Hooks that exited are reaped at the next Check; at most
//     kMaxHooks run at once, more are skipped and logged.
//   - With `slowdowns` and `on_slowdown` set, Check() also runs
//     `on_slowdown` once for each new slowdown (a rank, metric and step it
//     began at not reported at the last Check), the same way, with the
//     job's health JSON (its slowdowns in it). The hooks of both kinds
//     count together against kMaxHooks.
//   - Stalled() is each stalled job with its stalled_for in seconds, as of
//     the last Check.
//   - Start() checks every `period` on a thread of its own until the
//     destructor (which does not wait for hooks still running).
//   - Thread-safe.
#ifndef MERIDIAN_COLLECTOR_STALL_WATCH_H_
#define MERIDIAN_COLLECTOR_STALL_WATCH_H_

#include <sys/types.h>

#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collector/activity_board.h"
#include "collector/slowdown_watch.h"

namespace meridian {

class StallWatch {
 public:
  static constexpr size_t kMaxHooks = 16;

  StallWatch(const ActivityBoard* board, int64_t stall_after_ns,
             std::string on_stall, const SlowdownWatch* slowdowns = nullptr,
             std::string on_slowdown = "");
  ~StallWatch();

  void Start(absl::Duration period);
  void Check(absl::Time now);
  std::vector<std::pair<std::string, double>> Stalled() const;
  // Hooks run so far (for tests and logs).
  int64_t hooks_run() const;

 private:
  // `flag` ("--on-stall") and `what` ("stalled") name the hook in logs.
  void RunHook(const char* flag, const char* what, const std::string& command,
               const std::string& job, const std::string& json)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // The job's health JSON with its slowdowns `found`, for the hook.
  std::string SlowdownJson(const std::string& job,
                           const std::vector<v1::HealthSlowdown>& found,
                           absl::Time now) const;
  void Reap() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  const ActivityBoard* const board_;
  const int64_t stall_after_ns_;
  const std::string on_stall_;
  const SlowdownWatch* const slowdowns_;
  const std::string on_slowdown_;
  mutable absl::Mutex mutex_;
  std::map<std::string, double> stalled_ ABSL_GUARDED_BY(mutex_);
  // "job rank metric from_step" of the slowdowns hooked, still on.
  std::set<std::string> slow_ ABSL_GUARDED_BY(mutex_);
  std::vector<pid_t> hooks_ ABSL_GUARDED_BY(mutex_);
  int64_t hooks_run_ ABSL_GUARDED_BY(mutex_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_STALL_WATCH_H_
