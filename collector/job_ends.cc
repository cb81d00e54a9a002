#include "collector/job_ends.h"

#include <algorithm>

namespace meridian {

void JobEnds::MakeRoom() {
  if (jobs_.size() < max_jobs_ || jobs_.empty()) return;
  auto oldest = jobs_.begin();
  for (auto it = jobs_.begin(); it != jobs_.end(); ++it) {
    if (it->second.last_seen < oldest->second.last_seen) oldest = it;
  }
  jobs_.erase(oldest);
  ++evicted_;
}

std::vector<DeclaredProcess> JobEnds::ProcessesOf(const v1::Batch& batch) {
  std::vector<DeclaredProcess> out;
  out.reserve(static_cast<size_t>(batch.processes_size()));
  for (const v1::Process& p : batch.processes()) {
    out.push_back({batch.strings(static_cast<int>(p.job())),
                   batch.strings(static_cast<int>(p.node())), p.pid(),
                   p.incarnation(), p.rank(), p.world_size(), p.ended()});
  }
  return out;
}

std::vector<std::string> JobEnds::Saw(
    const std::vector<DeclaredProcess>& processes) {
  ++batches_;
  std::vector<std::string> touched;
  for (const DeclaredProcess& p : processes) {
    auto it = jobs_.find(p.job);
    if (it == jobs_.end()) {
      MakeRoom();
      it = jobs_.emplace(p.job, Job{}).first;
    }
    Job& job = it->second;
    if (job.last_seen != batches_) {
      job.last_seen = batches_;
      touched.push_back(p.job);
    }
    auto [process, added] = job.processes.try_emplace(
        std::make_tuple(p.node, p.pid, p.incarnation), false);
    if (added) ++job.running;
    if (p.ended != process->second) {  // it ended, or runs again
      process->second = p.ended;
      job.running += p.ended ? -1 : 1;
    }
    if (p.rank >= 0) job.ranks.insert(p.rank);
    job.world_size = std::max(job.world_size, p.world_size);
  }
  std::vector<std::string> ended;
  for (std::string& name : touched) {
    auto it = jobs_.find(name);
    if (it == jobs_.end()) continue;  // evicted by a later job of the batch
    const Job& job = it->second;
    if (job.running == 0 &&
        static_cast<int64_t>(job.ranks.size()) >= job.world_size) {
      jobs_.erase(it);
      ended.push_back(std::move(name));
    }
  }
  return ended;
}

}  // namespace meridian
