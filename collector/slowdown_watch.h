// SlowdownWatch: fail-slow detection while jobs run (docs/health.md,
// "Slowdowns"). Agents report each process's ended steps with their
// activity, about every second (v1::ProcessActivity.steps); per rank the
// watch keeps two series, compute (the step less its communication) and
// communication, each tested by a SlowdownDetector as its steps come.
//
// Contract:
//   - Add() takes one process's report (a rank >= 0 and a job; others are
//     ignored). At most kMaxRanks ranks are followed over all jobs; the
//     steps of one more are not (counted in refused()). A rank not
//     reported for kForget is forgotten at the next Add.
//   - Job() is the job's slowdowns now, by rank then metric: a rank slower
//     than its own past (its detector's slowdown) and, now, at least
//     SlowdownDetector::kRatio times the median of the job's other ranks
//     (where it has others): every such compute slowdown; communication
//     slowdowns only where no rank of the job is slower in compute (then
//     the others' communication grew by waiting for it: not their fault).
//     Every rank slower together (the machine, the input) is the job's
//     change, not a rank's: not reported.
//   - Links: per rank and peer, the time its point-to-point calls with
//     that peer took per MiB they moved (v1::StepTime.peers), a third
//     series tested the same way. A pair whose both ends became slower
//     with each other (a's series for b and b's for a), neither of them
//     slower in compute, and now at least kRatio times the median of the
//     job's other pairs (where it has others; each pair's series of its
//     lower rank), is reported once as metric "link" (rank the
//     lower, peer the other; baseline_ns and now_ns are ns a MiB, the
//     lower rank's; from_step the later of the two ends'), and
//     neither end's communication slowdown is then reported: a late
//     sender or receiver makes only the other end wait longer. At most
//     kMaxLinks series over all jobs (more are not followed, counted in
//     refused()).
//   - Every slowdown reported costs its rank at least kStepShare of its
//     step now (the recent medians of compute plus communication): the
//     time it adds a step (now - baseline; for a link, times the MiB its
//     last step moved with the peer). A series slower than its past by a
//     part of the step that does not bound it (a link carrying 1 % of the
//     step, now twice as slow, on a busy shared machine) is not a
//     fail-slow.
//   - Each slowdown names the counters of its rank's node that changed
//     with it (NodeCounterHistory::Changed, from the time its first slow
//     step was reported), from the node counters AddNodeCounters keeps.
//   - SlowJobs() is every job's that has any.
//   - Thread-safe.
#ifndef MERIDIAN_COLLECTOR_SLOWDOWN_WATCH_H_
#define MERIDIAN_COLLECTOR_SLOWDOWN_WATCH_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collector/node_counter_history.h"
#include "meridian/v1/control.pb.h"
#include "meridian/v1/query.pb.h"
#include "query/analysis/slowdown_detector.h"

namespace meridian {

class SlowdownWatch {
 public:
  static constexpr size_t kMaxRanks = 16384;
  static constexpr size_t kMaxLinks = 32768;
  static constexpr absl::Duration kForget = absl::Minutes(10);
  static constexpr double kStepShare = 0.05;

  void Add(const std::string& node, const v1::ProcessActivity& process,
           absl::Time now);
  // A node's counters, as its agent's poll carried them (checked with
  // NodeCounterHistory::Check).
  void AddNodeCounters(const std::string& node,
                       const NodeCounterHistory::Counters& counters,
                       int64_t node_ns, absl::Time at) {
    counters_.Add(node, counters, node_ns, at);
  }
  std::vector<v1::HealthSlowdown> Job(const std::string& job) const;
  // Each job with slowdowns now, with them (Job()'s): the metric
  // meridian_job_slow_ranks{job} counts them, --on-slowdown reports them.
  std::map<std::string, std::vector<v1::HealthSlowdown>> SlowJobs() const;
  uint64_t refused() const;

 private:
  struct Rank {
    std::string node;
    absl::Time reported;
    SlowdownDetector compute;
    SlowdownDetector communication;
    // Per peer: ns a MiB of its point-to-point calls with that peer, and
    // the bytes of the last step that had any.
    struct Link {
      SlowdownDetector per_mib;
      int64_t bytes = 0;
    };
    std::map<int32_t, Link> links;
    // The first step of each report and when it came, the last kReports.
    std::deque<std::pair<int64_t, absl::Time>> reports;
  };
  static constexpr size_t kReports = 256;
  // The report of `s` for rank `rank` of `r`, with its node's counters.
  void Report(int32_t rank, const Rank& r, const char* metric,
              const SlowdownDetector::Slowdown& s,
              std::vector<v1::HealthSlowdown>* out) const;
  // Adds `steps`' peers to `rank`'s link series.
  void AddLinks(const v1::ProcessActivity& process, Rank* rank)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  using Ranks = std::map<std::pair<std::string, int32_t>, Rank>;
  // Job()'s answer over one job's ranks [first, end).
  std::vector<v1::HealthSlowdown> JobLocked(Ranks::const_iterator first,
                                            Ranks::const_iterator end) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  mutable absl::Mutex mutex_;
  Ranks ranks_ ABSL_GUARDED_BY(mutex_);
  absl::Time swept_ ABSL_GUARDED_BY(mutex_) = absl::InfinitePast();
  uint64_t refused_ ABSL_GUARDED_BY(mutex_) = 0;
  size_t links_ ABSL_GUARDED_BY(mutex_) = 0;  // link series in ranks_
  NodeCounterHistory counters_;               // thread-safe itself
};

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_SLOWDOWN_WATCH_H_
