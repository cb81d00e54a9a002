#include "collector/slowdown_watch.h"

#include <algorithm>

namespace meridian {
namespace {

void Report(int32_t rank, const std::string& node, const char* metric,
            const SlowdownDetector::Slowdown& s,
            std::vector<v1::HealthSlowdown>* out) {
  v1::HealthSlowdown& r = out->emplace_back();
  r.set_rank(rank);
  r.set_node(node);
  r.set_metric(metric);
  r.set_from_step(s.from_step);
  r.set_ratio(s.ratio);
  r.set_baseline_ns(s.baseline_ns);
  r.set_now_ns(s.now_ns);
  r.set_peer(-1);
}

// Whether now[i] is at least kRatio times the median of the others' (true
// with no others): a rank slower than its past but no slower than the rest
// of its job is a change of the whole job, not its own.
bool AboveOthers(const std::vector<int64_t>& now, size_t i) {
  std::vector<int64_t> others;
  for (size_t j = 0; j < now.size(); ++j) {
    if (j != i) others.push_back(now[j]);
  }
  if (others.empty()) return true;
  const size_t mid = others.size() / 2;
  std::nth_element(others.begin(), others.begin() + mid, others.end());
  return static_cast<double>(now[i]) >=
         SlowdownDetector::kRatio * static_cast<double>(others[mid]);
}

}  // namespace

void SlowdownWatch::Add(const std::string& node,
                        const v1::ProcessActivity& process, absl::Time now) {
  if (process.rank() < 0 || process.job().empty()) return;
  absl::MutexLock lock(&mutex_);
  if (now - swept_ > absl::Minutes(1)) {  // forget the silent, now and then
    swept_ = now;
    for (auto it = ranks_.begin(); it != ranks_.end();) {
      it = now - it->second.reported > kForget ? ranks_.erase(it)
                                               : std::next(it);
    }
  }
  const std::pair<std::string, int32_t> key(process.job(), process.rank());
  auto it = ranks_.find(key);
  if (it == ranks_.end()) {
    if (process.steps().empty()) return;
    if (ranks_.size() >= kMaxRanks) {
      ++refused_;
      return;
    }
    it = ranks_.emplace(key, Rank{}).first;
  }
  Rank& rank = it->second;
  rank.node = node;
  rank.reported = now;
  for (const v1::StepTime& s : process.steps()) {
    rank.compute.Add(s.step(), s.dur_ns() - s.comm_ns());
    rank.communication.Add(s.step(), s.comm_ns());
  }
}

std::vector<v1::HealthSlowdown> SlowdownWatch::Job(
    const std::string& job) const {
  absl::MutexLock lock(&mutex_);
  const auto first = ranks_.lower_bound({job, INT32_MIN});
  auto end = first;
  while (end != ranks_.end() && end->first.first == job) ++end;
  // Each series' recent median, for the other ranks' level.
  std::vector<int64_t> compute_now, communication_now;
  for (auto it = first; it != end; ++it) {
    compute_now.push_back(it->second.compute.recent_ns());
    communication_now.push_back(it->second.communication.recent_ns());
  }
  std::vector<v1::HealthSlowdown> compute, communication;
  size_t i = 0;
  for (auto it = first; it != end; ++it, ++i) {
    const Rank& r = it->second;
    if (r.compute.slowdown() && AboveOthers(compute_now, i)) {
      Report(it->first.second, r.node, "compute", *r.compute.slowdown(),
             &compute);
    }
    if (r.communication.slowdown() && AboveOthers(communication_now, i)) {
      Report(it->first.second, r.node, "communication",
             *r.communication.slowdown(), &communication);
    }
  }
  if (!compute.empty()) return compute;
  return communication;
}

std::vector<std::pair<std::string, double>> SlowdownWatch::SlowJobs() const {
  std::vector<std::string> jobs;
  {
    absl::MutexLock lock(&mutex_);
    for (const auto& [key, rank] : ranks_) {
      const bool slow =
          rank.compute.slowdown() || rank.communication.slowdown();
      if (slow && (jobs.empty() || jobs.back() != key.first)) {
        jobs.push_back(key.first);
      }
    }
  }
  std::vector<std::pair<std::string, double>> out;
  for (const std::string& job : jobs) {
    const size_t slow = Job(job).size();
    if (slow > 0) out.emplace_back(job, static_cast<double>(slow));
  }
  return out;
}

uint64_t SlowdownWatch::refused() const {
  absl::MutexLock lock(&mutex_);
  return refused_;
}

}  // namespace meridian
