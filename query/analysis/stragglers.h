// Stragglers: which rank is late, from the DependencyGraph's collective
// instances and matched messages (Scalasca's "wait at collective" and
// "late sender", Horovod's negotiation ticks).
//
// Per collective instance: the arrival skew (last start minus first) and
// the last rank to arrive. The time a member waits is from its own start
// to the arrival it depends on (the last one for Allreduce-like and at the
// root of Reduce/Gather, the root's for Bcast/Scatter, the last of ranks
// up to its own for Scan, the last of its in-neighbors for a neighbor
// collective), but no longer than it stayed in the call; that time is
// charged to the rank it waited for. Which start a member waited for is
// the graph's end binding (DependencyGraph::end_binding), read, not found
// again.
// Per matched message whose send started after its receive: the receive's
// wait, charged to the sender. Ranks are listed most waited on first.
//
// Example: ranks 0, 1, 3 enter an MPI_Allreduce at 3 ms, rank 2 at 5 ms:
// skew 2 ms, last rank 2, and rank 2 made the others wait 3 x 2 = 6 ms.
//
// More: docs/analysis.md, "Stragglers".
#ifndef MERIDIAN_QUERY_ANALYSIS_STRAGGLERS_H_
#define MERIDIAN_QUERY_ANALYSIS_STRAGGLERS_H_

#include <map>
#include <vector>

#include "meridian/v1/query.pb.h"
#include "query/analysis/dependency_graph.h"

namespace meridian {

// `head`: instances listed (most skewed first); 0 lists all. Fills
// everything but job.
v1::StragglersReply Stragglers(const DependencyGraph& graph, int head);

// The same per step of first..last (inclusive), each over the instances
// and messages tagged with that step (a message: its send's step, else its
// receive's) and listing only the ranks that waited or were waited for;
// steps with neither are left out. What a step's summary keeps
// (step_summaries.h).
std::map<int64_t, v1::StragglersReply> StragglersByStep(
    const DependencyGraph& graph, int64_t first, int64_t last, int head);

// Adds to `reply` the `head` most skewed of `instances` (0: all; equal skews
// keep their order) and `ranks`, most waited on first (equal waits by
// rank): how Stragglers, and the step summaries' sum, list them.
void ListStragglers(std::vector<v1::CollectiveInstance> instances, int head,
                    std::map<int32_t, v1::RankWait> ranks,
                    v1::StragglersReply* reply);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_STRAGGLERS_H_
