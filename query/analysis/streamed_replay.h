// StreamedReplay: a whole job's replay (replay.h, replay_report.h) a block
// of steps at a time, for a job too large to replay at once: in the memory
// of one block, with running totals.
//
// Blocks of consecutive steps, earliest first, each loaded alone
// (JobSpans::LoadSteps: its steps' window, placed by the job's stored clock
// solution `stored`) and replayed from its measured start: a block's
// tracks start where they were measured, so a change's effect on one block
// does not carry into the next. Where each step begins as measured whatever
// the step before predicted (ranks that meet at a step's end and begin the
// next together), that is the whole replay's answer per step; otherwise a
// block's first step differs by how far apart the step before left the
// ranks. The reply holds:
//   - steps: every step's, as its block's replay gives it;
//   - first_step, last_step: the job's; measured_ns: the first start to
//     the last end of the spans tagged with a step (a whole replay's
//     window also holds the time before and after the steps);
//     predicted_ns: that less the sum of the blocks' savings (each block's
//     window measured less predicted); the same per rank;
//   - spans, scaled_spans, broken_dependencies: summed;
//   - blocks: how many; no critical paths (measured_path and
//     predicted_path are empty).
// Messages are paired within a block's steps (JobRead::message_steps).
#ifndef MERIDIAN_QUERY_ANALYSIS_STREAMED_REPLAY_H_
#define MERIDIAN_QUERY_ANALYSIS_STREAMED_REPLAY_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "meridian/v1/query.pb.h"
#include "query/analysis/replay.h"
#include "store/store.h"

namespace meridian {

// NOT_FOUND if no span of the job has a step; FAILED_PRECONDITION if
// `stored` is not the job's current clock solution; the replay's own errors
// (replay.h). `block_spans`: about how many spans a block holds (at least
// one step); `max_spans`: the most it may hold (a block over it is read
// again as half as many steps; one step over it is RESOURCE_EXHAUSTED,
// naming the step).
absl::StatusOr<v1::ReplayReply> StreamedReplay(
    Store& store, const JobCatalog& catalog,
    const std::optional<StoredJobResult>& stored, const ReplayChanges& changes,
    int64_t block_spans, int64_t max_spans);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_STREAMED_REPLAY_H_
