#include "collector/slowdown_watch.h"

#include <algorithm>
#include <optional>
#include <set>

namespace meridian {
namespace {

// Per value of `now`, the median of the others' (0 where there are no
// others): a rank slower than its past but no slower than the rest of its
// job is a change of the whole job, not its own. Sorted once: without value
// i, the middle of the rest is v[m] or v[m + 1].
std::vector<int64_t> OthersMedians(const std::vector<int64_t>& now) {
  if (now.size() < 2) return std::vector<int64_t>(now.size(), 0);
  std::vector<int64_t> sorted = now;
  std::sort(sorted.begin(), sorted.end());
  const size_t m = (now.size() - 1) / 2;
  std::vector<int64_t> out;
  for (int64_t value : now) {
    const size_t at = static_cast<size_t>(
        std::lower_bound(sorted.begin(), sorted.end(), value) - sorted.begin());
    out.push_back(m < at ? sorted[m] : sorted[m + 1]);
  }
  return out;
}

bool AboveOthers(int64_t now, int64_t others) {
  return static_cast<double>(now) >=
         SlowdownDetector::kRatio * static_cast<double>(others);
}

// Whether `added` ns a step is at least kStepShare of a step of `step_ns`.
bool BoundsTheStep(double added, int64_t step_ns) {
  return added >= SlowdownWatch::kStepShare * static_cast<double>(step_ns);
}

double Added(const SlowdownDetector::Slowdown& s) {
  return static_cast<double>(s.now_ns) - static_cast<double>(s.baseline_ns);
}

}  // namespace

void SlowdownWatch::Report(int32_t rank, const Rank& r, const char* metric,
                           const SlowdownDetector::Slowdown& s,
                           std::vector<v1::HealthSlowdown>* out) const {
  v1::HealthSlowdown& report = out->emplace_back();
  report.set_rank(rank);
  report.set_node(r.node);
  report.set_metric(metric);
  report.set_from_step(s.from_step);
  report.set_ratio(s.ratio);
  report.set_baseline_ns(s.baseline_ns);
  report.set_now_ns(s.now_ns);
  report.set_peer(-1);
  // When its first slow step came: the report that carried it.
  auto it = std::upper_bound(
      r.reports.begin(), r.reports.end(), s.from_step,
      [](int64_t step, const std::pair<int64_t, absl::Time>& report) {
        return step < report.first;
      });
  if (it == r.reports.begin()) return;  // older than the reports kept
  for (v1::HealthCounterChange& c :
       counters_.Changed(r.node, std::prev(it)->second)) {
    *report.add_counters() = std::move(c);
  }
}

void SlowdownWatch::Add(const std::string& node,
                        const v1::ProcessActivity& process, absl::Time now) {
  if (process.rank() < 0 || process.job().empty()) return;
  absl::MutexLock lock(&mutex_);
  if (now - swept_ > absl::Minutes(1)) {  // forget the silent, now and then
    swept_ = now;
    for (auto it = ranks_.begin(); it != ranks_.end();) {
      if (now - it->second.reported > kForget) {
        links_ -= it->second.links.size();
        it = ranks_.erase(it);
      } else {
        ++it;
      }
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
  if (!process.steps().empty() &&
      (rank.reports.empty() ||
       process.steps(0).step() > rank.reports.back().first)) {
    rank.reports.emplace_back(process.steps(0).step(), now);
    if (rank.reports.size() > kReports) rank.reports.pop_front();
  }
  for (const v1::StepTime& s : process.steps()) {
    rank.compute.Add(s.step(), s.dur_ns() - s.comm_ns());
    rank.communication.Add(s.step(), s.comm_ns());
  }
  AddLinks(process, &rank);
}

void SlowdownWatch::AddLinks(const v1::ProcessActivity& process, Rank* rank) {
  for (const v1::StepTime& s : process.steps()) {
    for (const v1::PeerTime& p : s.peers()) {
      if (p.bytes() <= 0 || p.ns() < 0 || p.peer() == process.rank()) continue;
      auto it = rank->links.find(p.peer());
      if (it == rank->links.end()) {
        if (links_ >= kMaxLinks) {
          ++refused_;
          continue;
        }
        it = rank->links.emplace(p.peer(), Rank::Link{}).first;
        ++links_;
      }
      const double per_mib = static_cast<double>(p.ns()) * (1 << 20) /
                             static_cast<double>(p.bytes());
      it->second.per_mib.Add(s.step(),
                             static_cast<int64_t>(std::min(per_mib, 1e18)));
      it->second.bytes = p.bytes();
    }
  }
}

std::vector<v1::HealthSlowdown> SlowdownWatch::JobLocked(
    Ranks::const_iterator first, Ranks::const_iterator end) const {
  // Each series' recent median, for the other ranks' level.
  std::vector<int64_t> compute_now, communication_now;
  for (auto it = first; it != end; ++it) {
    compute_now.push_back(it->second.compute.recent_ns());
    communication_now.push_back(it->second.communication.recent_ns());
  }
  const std::vector<int64_t> compute_others = OthersMedians(compute_now);
  const std::vector<int64_t> communication_others =
      OthersMedians(communication_now);
  std::vector<v1::HealthSlowdown> compute, communication;
  std::map<int32_t, int64_t> step_ns;  // per rank, its step now
  size_t i = 0;
  for (auto it = first; it != end; ++it, ++i) {
    const Rank& r = it->second;
    const int64_t step = compute_now[i] + communication_now[i];
    step_ns[it->first.second] = step;
    if (r.compute.slowdown() &&
        AboveOthers(compute_now[i], compute_others[i]) &&
        BoundsTheStep(Added(*r.compute.slowdown()), step)) {
      Report(it->first.second, r, "compute", *r.compute.slowdown(), &compute);
    }
    if (r.communication.slowdown() &&
        AboveOthers(communication_now[i], communication_others[i]) &&
        BoundsTheStep(Added(*r.communication.slowdown()), step)) {
      Report(it->first.second, r, "communication", *r.communication.slowdown(),
             &communication);
    }
  }
  // Links: both ends slower with each other, neither slower in compute,
  // and now slower than the job's other links (all slower together: the
  // machine's change, not a link's).
  std::set<int32_t> computing, linked;
  for (const v1::HealthSlowdown& c : compute) computing.insert(c.rank());
  std::vector<int64_t> links_now;  // each pair's (from its lower rank)
  for (auto it = first; it != end; ++it) {
    for (const auto& [b, link] : it->second.links) {
      if (b > it->first.second) links_now.push_back(link.per_mib.recent_ns());
    }
  }
  const std::vector<int64_t> links_others = OthersMedians(links_now);
  std::vector<v1::HealthSlowdown> links;
  size_t pair = 0;
  for (auto it = first; it != end; ++it) {
    const int32_t a = it->first.second;
    for (const auto& [b, link] : it->second.links) {
      if (b <= a) continue;
      const size_t at = pair++;
      const std::optional<SlowdownDetector::Slowdown>& slow =
          link.per_mib.slowdown();
      if (!slow || computing.count(a) > 0 || computing.count(b) > 0 ||
          !AboveOthers(links_now[at], links_others[at])) {
        continue;
      }
      auto other = ranks_.find({it->first.first, b});
      if (other == ranks_.end()) continue;
      auto back = other->second.links.find(a);
      if (back == other->second.links.end() ||
          !back->second.per_mib.slowdown()) {
        continue;
      }
      // The time it adds to a step of a (bytes of its last step).
      const double added =
          Added(*slow) * static_cast<double>(link.bytes) / (1 << 20);
      if (!BoundsTheStep(added, step_ns[a])) continue;
      SlowdownDetector::Slowdown s = *slow;
      // Slow from when both ends are: an end's earlier estimate is its
      // own noise.
      s.from_step =
          std::max(s.from_step, back->second.per_mib.slowdown()->from_step);
      Report(a, it->second, "link", s, &links);
      links.back().set_peer(b);
      linked.insert(a);
      linked.insert(b);
    }
  }
  const bool any_compute = !compute.empty();
  std::vector<v1::HealthSlowdown> out =
      any_compute ? std::move(compute) : std::move(communication);
  if (!any_compute) {  // the ends of a slow link: the link's
    out.erase(std::remove_if(out.begin(), out.end(),
                             [&](const v1::HealthSlowdown& c) {
                               return linked.count(c.rank()) > 0;
                             }),
              out.end());
  }
  out.insert(out.end(), links.begin(), links.end());
  std::stable_sort(
      out.begin(), out.end(),
      [](const v1::HealthSlowdown& x, const v1::HealthSlowdown& y) {
        return x.rank() < y.rank();
      });
  return out;
}

std::vector<v1::HealthSlowdown> SlowdownWatch::Job(
    const std::string& job) const {
  absl::MutexLock lock(&mutex_);
  const auto first = ranks_.lower_bound({job, INT32_MIN});
  auto end = first;
  while (end != ranks_.end() && end->first.first == job) ++end;
  return JobLocked(first, end);
}

std::map<std::string, std::vector<v1::HealthSlowdown>> SlowdownWatch::SlowJobs()
    const {
  std::map<std::string, std::vector<v1::HealthSlowdown>> out;
  absl::MutexLock lock(&mutex_);
  for (auto first = ranks_.begin(); first != ranks_.end();) {
    auto end = first;
    bool slow = false;
    for (; end != ranks_.end() && end->first.first == first->first.first;
         ++end) {
      slow |= end->second.compute.slowdown() ||
              end->second.communication.slowdown();
      for (const auto& [peer, link] : end->second.links) {
        slow |= link.per_mib.slowdown().has_value();
      }
    }
    if (slow) {
      std::vector<v1::HealthSlowdown> found = JobLocked(first, end);
      if (!found.empty()) out[first->first.first] = std::move(found);
    }
    first = end;
  }
  return out;
}

uint64_t SlowdownWatch::refused() const {
  absl::MutexLock lock(&mutex_);
  return refused_;
}

}  // namespace meridian
