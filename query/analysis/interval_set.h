// IntervalSet: a union of half-open time intervals [start, end), kept
// sorted and disjoint, that answers "how much of [a, b) is covered" in
// O(log n) (prefix sums of the lengths). Used for compute, communication
// and their overlap per rank and step.
#ifndef MERIDIAN_QUERY_ANALYSIS_INTERVAL_SET_H_
#define MERIDIAN_QUERY_ANALYSIS_INTERVAL_SET_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace meridian {

class IntervalSet {
 public:
  using Interval = std::pair<int64_t, int64_t>;

  IntervalSet() = default;
  // Any intervals, in any order, overlapping or not; empty ones dropped.
  explicit IntervalSet(std::vector<Interval> intervals);

  // The time in [a, b) covered by the set.
  int64_t Measure(int64_t a, int64_t b) const;
  // The time covered by both sets.
  IntervalSet Intersect(const IntervalSet& other) const;

  const std::vector<Interval>& intervals() const { return intervals_; }

 private:
  void Index();

  std::vector<Interval> intervals_;      // sorted, disjoint, non-empty
  std::vector<int64_t> covered_before_;  // sum of lengths before each
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_INTERVAL_SET_H_
