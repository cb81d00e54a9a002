// CausalRefiner: corrects what round-trip probes cannot see (asymmetric
// network delay, load) from the order MPI itself imposes, one correction
// per node, from the spans of a job as they are read.
//
// Causality (times on the collector's clock, after the probe models): the
// groups of MpiMatching (mpi_semantics.h). No span of a group's ends can end
// before every span of its starts started: an Allreduce cannot end on any
// rank before the last rank entered it, a Bcast cannot end before the root
// entered, a Scan on rank r before ranks 0..r entered, a neighbor
// collective before its in-neighbors entered, a receive cannot complete
// before its send started, a Win_wait cannot end before the Win_completes
// of the access epochs matched to its exposure (matched by order, as
// messages are) started. Lock hand-offs and post-to-start edges are not
// used: which lock waited for which, and whether a Win_start waited for
// its Win_post, is read from the spans' times themselves, so they cannot
// correct them.
//
// Each such constraint "E, on node b, ends no earlier than S, on node a,
// starts" bounds the corrections x: x_a - x_b <= end(E) - start(S). The
// refiner keeps the tightest bound per node pair that a constraint names
// (a sparse map: only nodes that communicate), adds the probe models'
// bounds |x_n| <= uncertainty_n, and solves the system of difference
// constraints on a sparse graph (difference_solver.h: Bellman-Ford for
// feasibility, then cut-off Dijkstras as nodes are fixed; no nodes x nodes
// matrix and no cubic step): the feasible range of each x_n follows from
// shortest paths. Nodes are then fixed one
// at a time, the narrowest range first (the best-synchronised node), at the
// point of their range closest to 0: the probe models are trusted as far as
// causality allows, a node moves only as far as causality requires, and
// fixing a node at a point of its range
// keeps the rest feasible. If the probe bounds contradict causality they
// are widened (x4, up to 8 times). If causality contradicts itself (a cycle
// of bounds with a negative sum: the nodes' errors vary during the job by
// more than the constraints' margins, which one offset per node cannot
// follow), every bound is loosened by the least slack that makes them
// consistent (found by bisection), and the violations that remain are
// counted.
//
// Constraints between spans of one node cannot be corrected by a per-node
// offset; they are counted as violations before and after alike.
//
// More: docs/clocks.md, "3. Causal refinement" (a worked
// example, checked by causal_refiner_test.cc).
#ifndef MERIDIAN_QUERY_CLOCKS_CAUSAL_REFINER_H_
#define MERIDIAN_QUERY_CLOCKS_CAUSAL_REFINER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "query/clocks/settled_groups.h"
#include "query/ops/mpi_semantics.h"

namespace meridian {

// Fields ordered so that little padding lies between them (96 bytes).
struct CausalSpan {
  SpanRole role = SpanRole::kAllToAll;  // a role that Orders
  int node = 0;            // index of the span's node, 0 <= node < nodes
  int32_t rank = -1;       // world rank of its process
  uint32_t comm_size = 0;  // 0: unknown
  uint64_t comm = 0;
  std::optional<uint64_t> seq;  // collectives
  int32_t peer = -1;       // root (rooted collectives), destination or source
  int32_t tag = 0;         // point-to-point
  int32_t recv_peer = -1;  // a Sendrecv's receive: its source (-1: none)
  int32_t recv_tag = 0;    // ... and tag
  int64_t start = 0;       // collector-clock ns
  int64_t end = 0;
  uint64_t id = 0;  // the caller's name for the span (see adjustments)
  // Neighbor collectives: the world ranks of the in-neighbors; Win_post,
  // Win_start: of their group (mpi_args.h, ListedRanks). Copied by Add.
  absl::Span<const int32_t> sources;
};
static_assert(sizeof(CausalSpan) <= 96, "a CausalSpan grew");

struct Refinement {
  std::vector<int64_t> correction_ns;  // per node: add to its times
  int64_t constraints = 0;             // constraints checked
  int64_t violations_before = 0;       // with the probe models alone
  int64_t violations_after = 0;        // with the corrections too
  bool refined = false;                // false: no correction (see note)
  std::string note;                    // why not, or what was relaxed
  // The violations left after the corrections, as the least move that
  // clears each: span `id`'s end is later by `end_shift_ns` (ends only move
  // later, so clearing one never breaks another). An export applies them,
  // so that it shows no violation (Scalasca's controlled logical clock
  // moves events forward the same way). Ascending id.
  struct Adjustment {
    uint64_t id;
    int64_t end_shift_ns;
  };
  std::vector<Adjustment> adjustments;
};

class CausalRefiner {
 public:
  explicit CausalRefiner(int nodes);

  // Whether spans of `role` take part: collectives, messages, and the
  // calls of generalized active target epochs (kPost, kStart, kComplete,
  // kWinWait).
  static bool Orders(SpanRole role);

  // Spans of other roles, or of a node out of range, are ignored.
  void Add(const CausalSpan& span);
  // Room for `spans` more spans, so that adding them grows nothing.
  void Reserve(size_t spans);

  // `uncertainty_ns[n]`: the probe model's bound for node n. `settled`,
  // if given, holds groups of earlier spans (settled_groups.h): solved
  // together with the groups of the spans added, as if their spans had
  // been added too (their constraints, violations and bounds count).
  Refinement Solve(absl::Span<const int64_t> uncertainty_ns,
                   const SettledGroups* settled = nullptr);

  // After Solve: moves into `into` the groups of every collective instance
  // all of whose members are `final` and that is complete (as many members
  // as its communicator's size, where the spans say it) or, of an unknown
  // size, ends on the collector's clock before `instances_before` (closing
  // its key), and of every matched
  // message whose send and receive are final, and returns, per span added
  // (by index, in the order added), whether it is still open: in no group
  // moved. Spans that can match nothing (a collective without seq or
  // communicator, a message without rank or peer, an epoch call without
  // rank or window) are not open either once final. Epoch calls are never
  // settled
  // (their matching reads times).
  std::vector<bool> Settle(absl::FunctionRef<bool(int32_t)> final,
                           int64_t instances_before, SettledGroups* into) const;

 private:
  // After Solve: which matched messages Settle moves, those whose spans
  // are `final`, and whose Sendrecvs' other messages move too.
  std::vector<bool> SettlingMessages(
      absl::FunctionRef<bool(int32_t)> final) const;
  // Whether `group` is ordered by matching alone, not by its times.
  bool ByOrder(const MpiMatching::Group& group) const;
  // The violated constraints with corrections x; *constraints: how many.
  // With `adjustments`, also the least end shifts that clear them. With
  // `settled`, its groups count too.
  int64_t CountViolations(
      const MpiMatching& groups, absl::Span<const int64_t> x,
      int64_t* constraints,
      std::vector<Refinement::Adjustment>* adjustments = nullptr,
      const SettledGroups* settled = nullptr) const;
  // The bounds x_a - x_b <= w that `group` implies, to `bound`.
  void GroupBounds(
      const MpiMatching::Group& group,
      absl::FunctionRef<void(int32_t, int32_t, int64_t)> bound) const;
  // The tightest bound per node pair, into bound_ (from `settled`'s too).
  void CollectBounds(const MpiMatching& groups, const SettledGroups* settled);
  // Moves `group` into `into`, bounds and all.
  void AddSettled(const MpiMatching::Group& group, SettledGroups* into) const;

  int nodes_;
  std::optional<MpiMatching> matching_;  // Solve's
  // GroupBounds's, per node (kept to spare an allocation per group): the
  // group's latest start and earliest end there, whether it has one, and
  // the nodes it has them on.
  mutable std::vector<int64_t> latest_start_, earliest_end_;
  mutable std::vector<uint8_t> start_seen_, end_seen_;
  mutable std::vector<int> start_nodes_, end_nodes_;
  // AddSettled's, likewise.
  mutable std::vector<SettledGroups::Start> settled_starts_;
  mutable std::vector<SettledGroups::End> settled_ends_;
  // (a, b) -> w: x_a - x_b <= w, for the pairs a constraint names.
  absl::flat_hash_map<std::pair<int, int>, int64_t> bound_;
  std::vector<CausalSpan> spans_;  // their sources cleared: see below
  bool has_sendrecv_ = false;      // a span of kSendRecv was added
  std::vector<int32_t> sources_;   // per span, its list in source_lists_
  SourceLists source_lists_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_CLOCKS_CAUSAL_REFINER_H_
