// StreamedCriticalPath: a whole job's critical path (critical_path.h) walked
// a block of steps at a time, so that a job too large to load whole still
// has one, in the memory of one block.
//
// The walk goes back from the job's last end, a block of consecutive steps
// at a time, latest first. Block [a, b] walks the time from the first start
// of step a (over the ranks) to where the later block left the walk, and
// loads (JobSpans::LoadSteps) the steps a - 1 .. b widened to that time:
// every span overlapping it, the untagged ones between steps included, and
// every collective and message of the step before whole, since a walk that
// reaches a block's start can wait on them. The first block also holds the
// time before the first step, the last the time after the last step. Every
// block places its spans by the job's stored clock solution `stored`, which
// must be of the job as it stands (JobClocks::Update makes it), so that the
// blocks share one time axis.
//
// The path is the one CriticalPath finds over the whole job loaded at once,
// segment for segment, where no message is paired across steps (JobRead::
// message_steps: messages are paired among the block's steps); tested
// against it in streamed_path_test.cc. The reply's segments are the path's
// (the memory they take grows with the path, not with the job).
#ifndef MERIDIAN_QUERY_ANALYSIS_STREAMED_PATH_H_
#define MERIDIAN_QUERY_ANALYSIS_STREAMED_PATH_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "meridian/v1/query.pb.h"
#include "store/store.h"

namespace meridian {

// NOT_FOUND if no span of the job has a step; FAILED_PRECONDITION if
// `stored` is not the job's current clock solution. `block_spans`: about
// how many spans a block holds (at least one step). `max_spans`: the most a
// block may hold (a memory budget; 0: no limit). A block over it, as steps
// of uneven size or the time before the first step or after the last can
// make one, is read again as half as many steps; one step over it (with
// the step before and any such time) is RESOURCE_EXHAUSTED, naming the
// step, before it is read whole. `stats`, if set, counts what every block
// read.
absl::StatusOr<v1::CriticalPathReply> StreamedCriticalPath(
    Store& store, const JobCatalog& catalog,
    const std::optional<StoredJobResult>& stored, int64_t block_spans,
    int64_t max_spans, ScanStats* stats = nullptr);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_STREAMED_PATH_H_
