#include "query/analysis/interval_set.h"

#include <algorithm>

namespace meridian {

IntervalSet::IntervalSet(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  for (const Interval& i : intervals) {
    if (i.first >= i.second) continue;
    if (!intervals_.empty() && i.first <= intervals_.back().second) {
      intervals_.back().second = std::max(intervals_.back().second, i.second);
    } else {
      intervals_.push_back(i);
    }
  }
  Index();
}

void IntervalSet::Index() {
  covered_before_.resize(intervals_.size() + 1);
  covered_before_[0] = 0;
  for (size_t i = 0; i < intervals_.size(); ++i) {
    covered_before_[i + 1] =
        covered_before_[i] + (intervals_[i].second - intervals_[i].first);
  }
}

int64_t IntervalSet::Measure(int64_t a, int64_t b) const {
  if (a >= b || intervals_.empty()) return 0;
  // First interval ending after a; first starting at or after b.
  auto lo = std::lower_bound(
      intervals_.begin(), intervals_.end(), a,
      [](const Interval& i, int64_t t) { return i.second <= t; });
  auto hi = std::lower_bound(
      intervals_.begin(), intervals_.end(), b,
      [](const Interval& i, int64_t t) { return i.first < t; });
  if (lo >= hi) return 0;
  const size_t first = lo - intervals_.begin();
  const size_t last = hi - intervals_.begin();  // one past
  int64_t sum = covered_before_[last] - covered_before_[first];
  sum -= std::max<int64_t>(0, a - intervals_[first].first);
  sum -= std::max<int64_t>(0, intervals_[last - 1].second - b);
  return sum;
}

IntervalSet IntervalSet::Intersect(const IntervalSet& other) const {
  IntervalSet out;
  size_t i = 0, j = 0;
  while (i < intervals_.size() && j < other.intervals_.size()) {
    const Interval& a = intervals_[i];
    const Interval& b = other.intervals_[j];
    const int64_t lo = std::max(a.first, b.first);
    const int64_t hi = std::min(a.second, b.second);
    if (lo < hi) out.intervals_.emplace_back(lo, hi);
    if (a.second < b.second) {
      ++i;
    } else {
      ++j;
    }
  }
  out.Index();
  return out;
}

}  // namespace meridian
