// DependencyGraph: what each span of a job waited for, across tracks and
// ranks, built once from JobSpans for the analyses.
//
// Edges (docs/analysis.md):
//   program order  each track is cut into pieces: at every instant the
//                  innermost span covering it owns it (an enclosing span
//                  such as "step" owns only the time its children leave),
//                  gaps between spans are untraced pieces; asynchronous
//                  spans own no piece.
//   collective     the groups of MpiMatching (mpi_semantics.h): each
//   point-to-point group's ends depend on its starts (an Allreduce member's
//   lock hand-off  end on every member's start, a Bcast's ends on the
//                  root's start, a Scan's on the starts of ranks up to
//                  its own, a neighbor collective's on its in-neighbors'
//                  starts, a receive's end on its send's start, an
//                  exclusive lock epoch's acquiring call on the previous
//                  epoch's Win_unlock on another rank).
//   wait           MPI_Wait* ends when the asynchronous spans of its track
//                  that complete inside it do: it inherits their edges.
//   launch         a GPU span's start depends on the start of the CPU call
//                  with the same correlation id in its process.
//   synchronize    a CUDA synchronisation ends after the GPU activity of
//                  its process that completes inside it.
// Of the starts a span's end depends on, the binding one is the latest;
// end_binding(i) is that span if it starts after span i itself did (span i
// then waited for it), else -1.
//
// Example: rank 0 enters MPI_Allreduce at 3 ms, rank 2 at 5 ms, both leave
// at 5.1 ms: end_binding(rank 0's span) is rank 2's span; rank 2's is -1.
#ifndef MERIDIAN_QUERY_ANALYSIS_DEPENDENCY_GRAPH_H_
#define MERIDIAN_QUERY_ANALYSIS_DEPENDENCY_GRAPH_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "query/analysis/job_spans.h"
#include "query/ops/mpi_semantics.h"

namespace meridian {

class DependencyGraph {
 public:
  // `spans` must outlive the graph.
  explicit DependencyGraph(const JobSpans& spans);

  // [t0, t1) of a track owned by `span` (an index into spans()), or
  // untraced when span is -1.
  struct Piece {
    int64_t t0;
    int64_t t1;
    int32_t span;
  };
  absl::Span<const Piece> pieces(int32_t track) const {
    return absl::MakeConstSpan(pieces_.data() + piece_first_[track],
                               piece_first_[track + 1] - piece_first_[track]);
  }
  // The piece of `track` covering the instant just before t (the last piece
  // starting before t), or nullptr if none starts before t.
  const Piece* PieceBefore(int32_t track, int64_t t) const;

  int32_t end_binding(int64_t span) const { return end_binding_[span]; }
  // The CPU call that launched a GPU span, or -1.
  int32_t launch(int64_t span) const { return launch_[span]; }

  // Collective instances and matched messages, as span indices.
  const MpiMatching& mpi() const { return mpi_; }
  // For a Wait: the asynchronous spans it completes; for a sync: the GPU
  // span it waited for (as a one-element list); empty otherwise.
  std::vector<int32_t> Completes(int64_t span) const;

  const JobSpans& spans() const { return *spans_; }
  int64_t MemoryBytes() const;

 private:
  void BuildPieces();
  void BindMpiEnds();
  void BuildLaunches();
  void BuildCompletions();

  const JobSpans* spans_;
  std::vector<Piece> pieces_;
  std::vector<int64_t> piece_first_;  // per track, and one past the last
  std::vector<int32_t> end_binding_;
  std::vector<int32_t> launch_;
  MpiMatching mpi_;
  // Asynchronous spans per track by ascending end; GPU spans per process by
  // ascending end.
  std::vector<std::vector<int32_t>> async_by_end_;
  std::vector<std::vector<int32_t>> gpu_by_end_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_DEPENDENCY_GRAPH_H_
