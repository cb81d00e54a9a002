// JobEnds: which jobs have ended, from the processes their batches declare
// (v1::Process.ended: the agent saw the process exit and sent all of it).
//
// Contract:
//   - Saw(ProcessesOf(batch)) is called once per stored batch, in the order
//     stored. It returns the jobs of that batch that have now ended: every
//     process of the job seen since the collector started has ended, and, where
//     a launcher said how many ranks it started (Process.world_size), that many
//     distinct ranks were seen. An ended job is forgotten: a later batch of it
//     starts it again.
//   - A process is (job, node, pid, incarnation): processes of one pid on a
//     node (containers' pid 1, pid reuse) are told apart by their probe
//     region's incarnation. A process declared ended and then again not
//     (a batch of it after its end: it reconnected) runs again.
//   - A process seen only before a restart is not known: with a world size,
//     the job's ranks seen fall short of it and the job never "ends" here
//     (it is refreshed once quiet); without one, the job ends once those
//     seen have.
//   - At most `max_jobs` jobs are followed; a new one beyond that replaces
//     the one seen least recently (evicted() counts them). Memory: about
//     100 bytes per process of the jobs followed (its node name copied).
//   - Not thread-safe (the ingest service calls it from the writer's
//     callback, under its own lock).
#ifndef MERIDIAN_COLLECTOR_JOB_ENDS_H_
#define MERIDIAN_COLLECTOR_JOB_ENDS_H_

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "meridian/v1/span.pb.h"

namespace meridian {

// A process as a batch declares it (its indexes resolved).
struct DeclaredProcess {
  std::string job;
  std::string node;
  int64_t pid = 0;
  uint64_t incarnation = 0;  // 0: not known
  int32_t rank = -1;
  int32_t world_size = 0;
  bool ended = false;
};

class JobEnds {
 public:
  explicit JobEnds(size_t max_jobs = 4096) : max_jobs_(max_jobs) {}

  // The batch's processes; its indexes must have been validated
  // (wire/batch_validator.h).
  static std::vector<DeclaredProcess> ProcessesOf(const v1::Batch& batch);

  std::vector<std::string> Saw(const std::vector<DeclaredProcess>& processes);

  size_t jobs() const { return jobs_.size(); }
  int64_t evicted() const { return evicted_; }

 private:
  struct Job {
    // (node, pid, incarnation) -> ended
    absl::flat_hash_map<std::tuple<std::string, int64_t, uint64_t>, bool>
        processes;
    absl::flat_hash_set<int32_t> ranks;  // >= 0 only
    int32_t world_size = 0;              // the largest declared
    int64_t running = 0;                 // processes not ended
    uint64_t last_seen = 0;              // batches_ when last in a batch
  };
  void MakeRoom();

  const size_t max_jobs_;
  absl::flat_hash_map<std::string, Job> jobs_;
  uint64_t batches_ = 0;
  int64_t evicted_ = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_JOB_ENDS_H_
