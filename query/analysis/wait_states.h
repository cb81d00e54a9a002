// WaitStates: where a job's ranks waited for each other, by Scalasca's
// wait-state patterns, and which ranks' activity caused it, directly and
// through chains of waits (docs/analysis.md, "Wait states"), from the
// job's DependencyGraph on corrected time.
//
// A wait is a blocking span (not asynchronous) whose end waited for a
// later start on another rank: the graph's end binding (the latest start
// its end depends on), or, for late_receiver, the receive its blocking send
// matched. It lasts from the span's start to that start, at most until the
// span ended. Its pattern:
//   late_sender      a receive (MPI_Recv, a Sendrecv, or the MPI_Wait that
//                    completes an MPI_Irecv) waiting for its send to start;
//   late_receiver    a blocking send (MPI_Send, MPI_Ssend, ...) that
//                    returned only after its receive was posted, later
//                    than the send began (a synchronous or rendezvous
//                    send): waiting for the receive;
//   wait_at_nxn      a member of an all-to-all-like collective (allreduce,
//                    allgather, alltoall, reduce-scatter; MPI, NCCL,
//                    torch.distributed) waiting for the last to arrive;
//   wait_at_barrier  the same in a barrier;
//   late_broadcast   a member of a 1-to-N collective (bcast, scatter)
//                    waiting for its root;
//   early_reduce     the root of an N-to-1 collective (reduce, gather)
//                    waiting for the last member;
//   other_collective a prefix (scan) or neighbor collective's member.
// Waiting spans are those of CPU threads (c10d's queue spans and GPU spans
// run beside them: NCCL and torch.distributed collectives count where a
// thread blocks in them, e.g. MPI under c10d's MPI backend). One-sided
// epochs (MPI_Win_*) and GPU edges are not wait states here. A late
// receiver is an MPI send (not MPI_Bsend, which never waits).
//
// Causes. The delaying rank is the one waited for; the delaying interval is
// the wait's own [start, end]. Where the delaying rank was itself waiting
// during part of it, that part is charged, the same way, to whom it waited
// for (a chain: rank 3 waits for rank 2, which waited for rank 1, which
// waited for rank 0's compute), up to kMaxChain links; the rest is the
// delaying rank's own: "in" names what it did then, the operation owning
// most of the interval on the awaited span's track (the graph's pieces:
// the innermost span at each instant), its waits left out ("untraced" if
// untraced time owns most). As Scalasca: the
// short-term cost of a rank is the wait it caused by its own activity
// directly (it was the rank waited for), the long-term cost what it caused
// through others' waits. Every ns of every wait is charged to exactly one
// rank and activity.
//
// Example: ranks 0, 1, 3 enter MPI_Allreduce at 3 ms, rank 2 at 5 ms after
// its "forward": three wait_at_nxn waits of 2 ms, each caused by rank 2
// in "forward"; rank 2's short-term cost 6 ms.
#ifndef MERIDIAN_QUERY_ANALYSIS_WAIT_STATES_H_
#define MERIDIAN_QUERY_ANALYSIS_WAIT_STATES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "query/analysis/dependency_graph.h"

namespace meridian {

struct WaitCause {
  int32_t rank = -1;
  std::string in;  // what it did meanwhile ("untraced": nothing traced)
  int64_t ns = 0;
};

// One pattern's waits of one rank, in one step (or over the job).
struct WaitPatternEntry {
  std::string pattern;
  int32_t rank = -1;
  std::optional<int64_t> step;  // none: the job's total (or untagged)
  int64_t wait_ns = 0;
  int64_t instances = 0;
  // Most first (ties: by rank); at most kMaxCauses.
  std::vector<WaitCause> caused_by;
};

struct RankWaits {
  int32_t rank = -1;
  int64_t wait_ns = 0;        // it waited, all patterns
  int64_t short_term_ns = 0;  // others waited for its own activity
  int64_t long_term_ns = 0;   // through chains of waits
};

struct WaitStatesResult {
  // By wait_ns, most first (ties: pattern, rank, step).
  std::vector<WaitPatternEntry> patterns;
  // Every rank of the job, by ascending rank.
  std::vector<RankWaits> ranks;
};

inline constexpr int kMaxChain = 32;
inline constexpr size_t kMaxCauses = 5;

// The job's waits: per pattern and rank over the whole job (entries
// without a step) and, with `by_step`, per pattern, rank and step as well
// (a wait's step: its waiting span's; untagged waits only in the totals).
// With `steps` (first, last): only the waits of those steps, per step (no
// totals), and the ranks' figures of those waits alone (a load of some
// steps holds spans of others).
WaitStatesResult WaitStates(
    const DependencyGraph& graph, bool by_step,
    const std::optional<std::pair<int64_t, int64_t>>& steps = std::nullopt);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_WAIT_STATES_H_
