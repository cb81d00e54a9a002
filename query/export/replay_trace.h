// ReplayTrace: a replay (query/analysis/replay.h) as one Chrome trace (Trace
// Event Format JSON) that shows the measured and the predicted timeline
// side by side (`meridian replay --trace FILE`).
//
// Per rank R two processes: "rank R measured" (pid 2R + 1) and "rank R
// predicted" (pid 2R + 2), sorted in that order; a process without a rank
// gets pids 1000001 + 2P and 1000002 + 2P (P: its index in the catalog).
// Each has the rank's tracks as threads (tid: the track's position in the
// process, from 1, named as stored). Every span is an "X" event in both,
// with its operation's name and category ("cat"); ts and dur are
// microseconds with three decimals since the earliest of the two
// timelines, whose Unix-epoch ns is otherData.epoch_ns.
//
// Written through `sink` in pieces of about 64 KiB: memory does not grow
// with the trace. False if the sink stopped it.
#ifndef MERIDIAN_QUERY_EXPORT_REPLAY_TRACE_H_
#define MERIDIAN_QUERY_EXPORT_REPLAY_TRACE_H_

#include <functional>

#include "absl/strings/string_view.h"
#include "query/analysis/job_spans.h"
#include "query/analysis/replay.h"

namespace meridian {

bool WriteReplayTrace(const JobSpans& spans, const ReplayTimes& times,
                      const std::function<bool(absl::string_view)>& sink);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_EXPORT_REPLAY_TRACE_H_
