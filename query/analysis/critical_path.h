// CriticalPath: what bounds a step's time. The longest path through the
// job's DependencyGraph over a time window (a step, or the whole job),
// found by walking back from the window's last end and, at every point,
// following the dependency that was satisfied last.
//
// Walk: start at the end of the latest-ending span of the window (lowest
// rank on ties). On a track, at time t, take the piece just before t:
//   - untraced time (between spans): on the path as untraced;
//   - a span whose end waited for a later start on another rank (the
//     DependencyGraph's end binding: the last rank into a collective, the
//     sender of a receive): the part after that arrival is communication;
//     the walk continues on the arriving rank at its arrival;
//   - a CUDA synchronisation: waiting, then on the GPU at the end of what
//     it waited for;
//   - any other piece of a span: compute (communication for MPI and NCCL),
//     and on to the piece before; at the start of a GPU span that followed
//     an idle stream, the wait for its launch is waiting, and the walk goes
//     on in the CPU call that launched it.
// until the window's start. Every instant of the window is on the path
// once, so the segments' durations sum to the window's.
//
// Example (times in ms): ranks 0, 1, 3 compute [0, 3), rank 2 computes
// [0, 5); all four then meet in an MPI_Allreduce that ends at 5.1. The walk
// starts at rank 0's Allreduce end (5.1), whose binding arrival is rank 2's
// at 5: the path is rank 2 "compute" [0, 5), then rank 0 MPI_Allreduce
// [5, 5.1): 5 ms compute, 0.1 ms communication, all of the step explained.
//
// More: docs/analysis.md, "Critical path" (the walk as a
// table; the jobs with known answers that critical_path_test.cc checks).
#ifndef MERIDIAN_QUERY_ANALYSIS_CRITICAL_PATH_H_
#define MERIDIAN_QUERY_ANALYSIS_CRITICAL_PATH_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>

#include "meridian/v1/query.pb.h"
#include "query/analysis/dependency_graph.h"
#include "query/analysis/job_spans.h"

namespace meridian {

// [start, end) on the collector's clock.
struct TimeWindow {
  int64_t start = 0;
  int64_t end = 0;
};

// The whole job: its first start to its last end.
TimeWindow JobWindow(const JobSpans& spans);
// The first start to the last end of the spans tagged with `step`; nullopt
// if no span is.
std::optional<TimeWindow> StepWindow(const JobSpans& spans, int64_t step);

// The critical path over `window`. Fills everything but job and step.
v1::CriticalPathReply CriticalPath(const DependencyGraph& graph,
                                   const TimeWindow& window);

// The same walk over a job loaded a block at a time, the latest block first
// (StreamedCriticalPath): each Back() goes on from where the later block
// left the walk, so the blocks' paths join into the whole one.
class PathWalk {
 public:
  PathWalk();
  ~PathWalk();
  PathWalk(const PathWalk&) = delete;
  PathWalk& operator=(const PathWalk&) = delete;

  // Walks `graph` back to window.start: the first call from window.end on
  // the latest-ending span's track, later calls from where the walk
  // stopped. `last`: window.start is the path's start (pieces are cut
  // there). Otherwise the walk stops at the first point at or before
  // window.start, and never below `complete_from`: the time from which
  // `graph` holds every span (and what each waits for), below which a
  // span's pieces may lack children it did not read. The next block goes
  // on from where it stopped: its graph must hold every span overlapping
  // [its complete_from, that point].
  void Back(const DependencyGraph& graph, const TimeWindow& window, bool last,
            int64_t complete_from = std::numeric_limits<int64_t>::min());
  // Whether the walk has reached its start (a last block, or an empty job).
  bool done() const { return done_; }
  // The reply over `window`, the whole walk's: everything but job, step and
  // chunks.
  v1::CriticalPathReply Finish(const TimeWindow& window) &&;

  struct Builder;

 private:
  std::unique_ptr<Builder> builder_;
  // Where the walk stands: a track's store id and the time.
  struct At {
    int64_t track_id;
    int64_t t;
  };
  std::optional<At> at_;
  bool done_ = false;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_CRITICAL_PATH_H_
