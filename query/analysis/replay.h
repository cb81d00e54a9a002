// Replay: what if. Simulates a job's dependency graph (DependencyGraph)
// with changed durations and predicts when every span would have started
// and ended (`meridian replay`, byteprofile/dPRO's replay).
//
// Each track is replayed piece by piece (DependencyGraph::Piece: the
// innermost span at each instant, or untraced time between spans), in its
// measured order, from its measured first start. A piece starts when the
// one before it on its track ends; it ends after its own time, and the last
// piece of a span that depended on other ranks ends no earlier than their
// predicted arrival plus the time the span took after the measured one:
//
//   measured:  end = max(t0, A) + T           (A: the latest measured
//                                              arrival; T >= 0)
//   predicted: end' = max(t0' + T_own, A' + T_comm)
//
// where t0 is the piece's start, and T_own = T_comm = T scaled by the
// span's factor. With no change every piece ends where it was measured
// (the tests check it). Arrivals A, per span (DependencyGraph's edges):
//   - a collective member, a receive, a Win_wait, a lock-epoch call: the
//     starts of its MpiMatching groups' starts (the instance's members, the
//     send, the matched Win_completes...);
//   - a Wait: the arrivals of the nonblocking operations it completes;
//   - a CUDA synchronisation: the end of the GPU span it waited for;
//   - a GPU span's first piece starts no earlier than the CPU call that
//     launched it starts plus the measured launch delay if the stream was
//     idle before it (the idle time on the stream is then not replayed).
// Untraced time on a process's first CPU thread is the program's own work:
// it is replayed as measured (scaled by --rank-like). Its other CPU threads
// follow it: after untraced time (and at their first span) they resume
// where the first thread's replay puts the measured resumption, no earlier
// than their previous span's end (a background thread's work is taken to
// be driven by the main thread's progress; nothing recorded says more).
//
// Changes (ReplayChanges), combined:
//   scales     a span whose category name is `pattern` (mpi, nccl,
//              cuda_kernel..., query/ops/category.h), or whose operation
//              name matches it as a glob (fnmatch: MPI_All*), takes
//              factor x its own time and T (several matching: the product).
//              Factor 0 removes the span: it waits for nothing either.
//   rank_like  rank R's compute takes what rank S's took: a piece of R in
//              a span that is neither MPI, NCCL nor a CUDA synchronisation
//              is scaled by S's time in that operation over R's, in the
//              same step and kind of track (CPU threads, GPU streams); R's
//              untraced CPU time likewise by S's over R's. Where one of
//              them lacks the step, the ratio over all steps; where one
//              lacks the operation, 1. A piece's step is its span's, or the
//              last one seen on its track.
//   comm_model T of a collective or message span (and of a Wait completing
//              some: its T_comm, and T_own no more than that) is the model's
//              time (comm_model.h) instead of its measured one.
//   no_wait    arrivals are ignored: end' = t0' + T_own, and a GPU span
//              starts right after the one before it on its stream.
//
// Cycles: on measured times that violate causality (a span depending on a
// start after its own end), tracks can wait for each other; the replay
// then drops the pending dependency of the track whose piece was measured
// earliest and counts it (broken_dependencies).
//
// Cost: O(spans + pieces + group members) time, plus a heap operation per
// blocked dependency; 24 bytes per piece and 16 per span besides the graph.
//
// Example (ms): ranks 0 and 1 compute [0, 3) and [0, 5), then Allreduce to
// 5.1. Replayed with rank 1 like rank 0: rank 1 computes [0, 3); the
// Allreduce's T is 0.1 after the last arrival (5): both end at 3.1.
// docs/analysis.md, "Replay", works through it.
#ifndef MERIDIAN_QUERY_ANALYSIS_REPLAY_H_
#define MERIDIAN_QUERY_ANALYSIS_REPLAY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "query/analysis/comm_model.h"
#include "query/analysis/dependency_graph.h"

namespace meridian {

struct ReplayChanges {
  struct Scale {
    std::string pattern;  // a category name, or a glob over op names
    double factor = 1;    // finite, >= 0
  };
  std::vector<Scale> scales;
  std::vector<std::pair<int32_t, int32_t>> rank_like;  // (R, S)
  std::optional<CommModel> comm_model;
  bool no_wait = false;
};

// The largest --scale factor, and --latency.
inline constexpr double kMaxFactor = 1000;
inline constexpr int64_t kMaxLatencyNs = 1000000000;

// INVALID_ARGUMENT saying what is wrong: a factor outside [0, kMaxFactor]
// or not finite, an empty pattern, a rank given twice in rank_like, a model
// with less than 1 byte/s or a latency outside [0, kMaxLatencyNs]. A
// scaled or modelled time is capped at about 11.6 days (1e15 ns).
absl::Status CheckChanges(const ReplayChanges& changes);

struct ReplayTimes {
  // Per span of the graph's JobSpans (same index): predicted start and end.
  std::vector<int64_t> start;
  std::vector<int64_t> end;
  int64_t broken_dependencies = 0;
  std::vector<char> scaled_ops;  // by JobSpan::op: some scale matched it
};

// NOT_FOUND naming the rank if a rank of rank_like has no spans; else
// CheckChanges's errors.
absl::StatusOr<ReplayTimes> Replay(const DependencyGraph& graph,
                                   const ReplayChanges& changes);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_REPLAY_H_
