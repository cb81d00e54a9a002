// ActivityBoard: what every traced process is in, as its agent last
// reported it with its trace poll (v1::PollRequest.activity,
// docs/health.md). Live state, never stored: a restarted collector knows
// nothing of it until the agents' next polls, about a second later.
//
// Contract:
//   - Check() is the boundary check of a report: at most kMaxProcesses
//     processes of kMaxThreads threads, names, stack frames and stack
//     errors at most kMaxNameBytes, stacks at most kMaxFrames frames,
//     at most kMaxSteps steps a process, each 0 <= comm_ns <= dur_ns
//     with at most kMaxStepPeers peers (rank >= 0, ns >= 0, bytes > 0);
//     INVALID_ARGUMENT saying what is over otherwise.
//   - Report() replaces everything agent `agent_id` reported before; an
//     agent not heard from for kForget is forgotten at the next report.
//     At most kMaxAgents agents are followed: a report from one more is
//     refused (RESOURCE_EXHAUSTED) and changes nothing.
//   - Job() is every process of `job` on the board, with how long ago its
//     agent reported it; Jobs() the jobs that have one.
//   - Thread-safe.
#ifndef MERIDIAN_COLLECTOR_ACTIVITY_BOARD_H_
#define MERIDIAN_COLLECTOR_ACTIVITY_BOARD_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "meridian/v1/control.pb.h"
#include "query/analysis/job_health.h"

namespace meridian {

class ActivityBoard {
 public:
  static constexpr int kMaxProcesses = 4096;
  static constexpr int kMaxThreads = 64;
  static constexpr size_t kMaxNameBytes = 4096;
  static constexpr int kMaxFrames = 64;    // a stack's, native or Python
  static constexpr int kMaxSteps = 1024;   // ended steps a process reports
  static constexpr int kMaxStepPeers = 8;  // agent/step_times.h's kMaxPeers
  static constexpr size_t kMaxAgents = 10000;
  static constexpr absl::Duration kForget = absl::Minutes(10);

  static absl::Status Check(
      const google::protobuf::RepeatedPtrField<v1::ProcessActivity>& report);

  absl::Status Report(const std::string& agent_id, const std::string& node,
                      std::vector<v1::ProcessActivity> processes,
                      absl::Time now);

  std::vector<LiveProcess> Job(const std::string& job, absl::Time now) const;
  // The jobs with a process on the board, by name.
  std::vector<std::string> Jobs() const;

 private:
  struct Agent {
    std::string node;
    absl::Time received;
    std::vector<v1::ProcessActivity> processes;
  };

  mutable absl::Mutex mutex_;
  std::map<std::string, Agent> agents_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_ACTIVITY_BOARD_H_
