// GraphWriter: one step's dependency graph (DependencyGraph) as a file that
// Graphviz (DOT) or yEd, Gephi and NetworkX (GraphML) read.
//
// Nodes: every span tagged with the step ("s" + index), labelled with rank,
// operation and duration, and one node per collective instance with a
// member in the step ("c" + index). Edges, each with its type:
//   program     consecutive spans on a track, in the order they begin
//               (the innermost span at each instant: an enclosing span
//               that begins before its first child leads to it, and its
//               later gaps add no edge);
//   launch      CPU call -> the GPU span it launched;
//   collective  each member -> its instance ("arrive") and the instance ->
//               each member ("complete");
//   message     send -> matching receive;
//   lock        an exclusive epoch's Win_unlock -> the call of the next
//               epoch on the same window and target that acquired the lock
//               (MpiMatching's lock hand-offs);
//   epoch       generalized active target: an origin's Win_complete -> the
//               target's Win_wait that closed the matched exposure, and the
//               target's Win_post -> an origin's Win_start that waited for
//               it (MpiMatching's epoch completions and posts);
//   completes   nonblocking operation -> the Wait that completed it.
// Edges whose source waited for nothing are plain; the edge that bound a
// span's end (the late arrival) has binding=true.
#ifndef MERIDIAN_QUERY_EXPORT_GRAPH_WRITER_H_
#define MERIDIAN_QUERY_EXPORT_GRAPH_WRITER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "meridian/v1/query.pb.h"
#include "query/analysis/dependency_graph.h"

namespace meridian {

// NOT_FOUND, naming the step, if no span is tagged with it.
absl::StatusOr<std::string> StepGraph(const DependencyGraph& graph,
                                      int64_t step, v1::GraphFormat format);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_EXPORT_GRAPH_WRITER_H_
