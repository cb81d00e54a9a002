#include "query/clocks/settled_groups.h"

#include <algorithm>
#include <limits>

namespace meridian {

void SettledGroups::AddGroup(absl::Span<const Start> starts,
                             absl::Span<const End> ends) {
  if (starts.empty() || ends.empty()) return;
  // One start per node: the latest (what every end waits for there).
  const size_t first = starts_.size();
  starts_.insert(starts_.end(), starts.begin(), starts.end());
  const auto from = starts_.begin() + static_cast<std::ptrdiff_t>(first);
  std::sort(from, starts_.end(), [](const Start& a, const Start& b) {
    return a.node != b.node ? a.node < b.node : a.time > b.time;
  });
  starts_.erase(std::unique(from, starts_.end(),
                            [](const Start& a, const Start& b) {
                              return a.node == b.node;
                            }),
                starts_.end());
  int64_t latest = std::numeric_limits<int64_t>::min();
  for (size_t i = first; i < starts_.size(); ++i) {
    latest = std::max(latest, starts_[i].time);
  }
  for (const End& e : ends) {
    ends_.push_back(e);
    if (e.time < latest) ++violations_before_;
  }
  start_first_.push_back(static_cast<int64_t>(starts_.size()));
  end_first_.push_back(static_cast<int64_t>(ends_.size()));
}

void SettledGroups::Bound(int32_t a, int32_t b, int64_t w) {
  auto [it, added] = bounds_.try_emplace(std::make_pair(a, b), w);
  if (!added) it->second = std::min(it->second, w);
}

int64_t SettledGroups::CountViolations(
    absl::Span<const int64_t> x,
    absl::flat_hash_map<uint64_t, int64_t>* shifts) const {
  const auto at = [&](int32_t node) {
    return node >= 0 && static_cast<size_t>(node) < x.size() ? x[node] : 0;
  };
  int64_t violations = 0;
  const int64_t count = groups();
  for (int64_t g = 0; g < count; ++g) {
    int64_t latest = std::numeric_limits<int64_t>::min();
    for (int64_t i = start_first_[g]; i < start_first_[g + 1]; ++i) {
      latest = std::max(latest, starts_[i].time + at(starts_[i].node));
    }
    for (int64_t i = end_first_[g]; i < end_first_[g + 1]; ++i) {
      const End& e = ends_[i];
      const int64_t end = e.time + at(e.node);
      if (end >= latest) continue;
      ++violations;
      int64_t& shift = (*shifts)[e.id];
      shift = std::max(shift, latest - end);
    }
  }
  return violations;
}

int64_t SettledGroups::MemoryBytes() const {
  return static_cast<int64_t>(
      starts_.capacity() * sizeof(Start) + ends_.capacity() * sizeof(End) +
      (start_first_.capacity() + end_first_.capacity()) * sizeof(int64_t) +
      bounds_.capacity() * (sizeof(std::pair<int32_t, int32_t>) + 9) +
      closed_.capacity() * (sizeof(std::pair<uint64_t, uint64_t>) + 1));
}

}  // namespace meridian
