// ReplayReport: `meridian replay`'s answer from a replay's predicted times
// (replay.h): the window's measured and predicted time, per step and rank,
// and the critical path of each timeline.
//
// The window is steps first..last (the first start to the last end of the
// spans tagged with them) or, without steps, the whole job; a rank's time
// is its first start to its last end among those spans, measured or
// predicted. The predicted critical path is CriticalPath over the graph of
// the predicted timeline (the same spans, moved). spans and scaled_spans
// count the window's spans (a range of steps: its own, not the job's).
#ifndef MERIDIAN_QUERY_ANALYSIS_REPLAY_REPORT_H_
#define MERIDIAN_QUERY_ANALYSIS_REPLAY_REPORT_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "meridian/v1/query.pb.h"
#include "query/analysis/dependency_graph.h"
#include "query/analysis/replay.h"

namespace meridian {

struct StepRange {
  int64_t first = 0;
  int64_t last = 0;
};

// Fills everything but job (without `paths`, the critical paths too).
// NOT_FOUND naming the steps if no span is tagged with one of them.
absl::StatusOr<v1::ReplayReply> ReplayReport(const DependencyGraph& graph,
                                             const ReplayTimes& times,
                                             std::optional<StepRange> steps,
                                             bool paths = true);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_REPLAY_REPORT_H_
