// SettledGroups: the causal groups of a job's clock evidence that later
// evidence can no longer change, kept between incremental solves
// (JobClocks::Update with a ClockSolveState) in the compact form the
// refinement needs of them, so that an update matches and places only the
// spans that are still open.
//
// A group (causal_refiner.h: "E, on node b, ends no earlier than S, on node
// a, starts") is kept as the latest start of its starts on each node and
// each end (node, end, span id), all on the collector's clock by the clock
// models that were final for them. What the refinement asks of it:
//   - constraints():       one per end (as CausalRefiner counts them);
//   - violations_before(): the ends before their group's latest start,
//                          with no correction;
//   - bounds():            the tightest x_a - x_b <= w per node pair over
//                          the groups (Bound, as the refiner computes
//                          them for each group);
//   - CountViolations(x):  the ends before their group's latest start
//                          under corrections x, and each one's least end
//                          shift: a pass over compact arrays, with no
//                          matching and no placing.
// Closed collective instances ((comm, seq) keys) are those whose every
// member is settled: a later span of one would change its groups, so
// JobClocks::Update solves again from all the evidence when one comes.
//
// Example: an Allreduce of ranks on nodes 0 and 1, entered at 100 and 450
// (node 0 twice: 100 and 300), left at 500 and 520. Kept: starts {0: 300,
// 1: 450}, ends {(0, 500), (1, 520)}; 2 constraints, none violated; with
// x = {0, 100}, node 1's start is at 550 and node 0's end (500) is violated,
// by 50.
#ifndef MERIDIAN_QUERY_CLOCKS_SETTLED_GROUPS_H_
#define MERIDIAN_QUERY_CLOCKS_SETTLED_GROUPS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/types/span.h"

namespace meridian {

class SettledGroups {
 public:
  struct Start {
    int32_t node;
    int64_t time;
  };
  struct End {
    int32_t node;
    int64_t time;
    uint64_t id;
  };

  // Adds a group: `starts` in any order (a node may come more than once),
  // `ends` each a constraint. A group without starts or ends is ignored.
  void AddGroup(absl::Span<const Start> starts, absl::Span<const End> ends);
  // The bound x_a - x_b <= w of a group added: the tightest per pair kept.
  void Bound(int32_t a, int32_t b, int64_t w);
  // The collective instance (comm, seq) is settled whole.
  void Close(uint64_t comm, uint64_t seq) { closed_.insert({comm, seq}); }
  bool Closed(uint64_t comm, uint64_t seq) const {
    return closed_.contains(std::make_pair(comm, seq));
  }

  int64_t groups() const {
    return static_cast<int64_t>(start_first_.size()) - 1;
  }
  int64_t constraints() const { return static_cast<int64_t>(ends_.size()); }
  int64_t violations_before() const { return violations_before_; }
  const absl::flat_hash_map<std::pair<int32_t, int32_t>, int64_t>& bounds()
      const {
    return bounds_;
  }
  // The ends before their group's latest start under corrections x (x[n]
  // added to node n's times); for each, shifts[id] becomes at least the
  // least move later that clears it. Nodes beyond x count as x = 0.
  int64_t CountViolations(absl::Span<const int64_t> x,
                          absl::flat_hash_map<uint64_t, int64_t>* shifts) const;
  // Bytes held, about.
  int64_t MemoryBytes() const;

 private:
  std::vector<Start> starts_;  // per group, one per node: the latest
  std::vector<End> ends_;
  // Group g's starts are starts_[start_first_[g], start_first_[g + 1]),
  // its ends likewise.
  std::vector<int64_t> start_first_{0};
  std::vector<int64_t> end_first_{0};
  int64_t violations_before_ = 0;
  absl::flat_hash_map<std::pair<int32_t, int32_t>, int64_t> bounds_;
  absl::flat_hash_set<std::pair<uint64_t, uint64_t>> closed_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_CLOCKS_SETTLED_GROUPS_H_
