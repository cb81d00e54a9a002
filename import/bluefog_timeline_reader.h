// Reads a Bluefog timeline (bfrun --timeline-filename P: one file per
// agent, P0.json, P1.json, ...) into an ImportedTrace, whole or not at
// all.
//
// The file: a JSON array that is never closed (each record ends "},\n"),
// of B and E events only; E has no name and no args. pid is a tensor,
// named by an `M process_name` record; tid is the recording thread's
// index (1, 2, ... in order of first appearance): the caller's thread
// shows ENQUEUE_<OP>, the communication thread PROC_<OP> (MPI_<OP> before
// June 2020) with sub-phases (COMMUNICATE, ALLOCATE_OUTPUT,
// COMPUTE_AVERAGE, MEMCPY_IN_FUSION_BUFFER...), and user activities
// (bf.timeline_start_activity: FORWARD...) appear under their own names.
//
// What it becomes: one process, rank options.rank, else the number that
// ends the file's name (tl3.json: 3), else 0 (a note says so); node
// options.node, else the file's base name. Per (tensor, thread) a track of
// kind TRACK_KIND_QUEUE, ids in order of appearance, named after the
// tensor, or "<tensor> (thread N)" for a tensor that appears on several
// threads (its enqueue and its processing overlap, so they cannot share a
// track). Every B/E pair (E closes the innermost open B of its pid and
// tid) is a span named and categorised by FrameworkOp
// (import/framework_ops.h): PROC_ALLREDUCE becomes an MPI span
// "MPI_Allreduce", PROC_WIN_PUT an MPI span of that name, NCCL_* NCCL
// spans; the rest CATEGORY_USER phases. The timeline carries no sizes:
// bytes 0.
//
// Times: µs of the agent's steady clock (CLOCK_MONOTONIC since boot, as
// far as the code shows), so relative: placed by import/time_base.h,
// options.epoch_ns (the boot time, to line agents of one host up), else
// the trace ends at options.fallback_end_ns with a note. B events still
// open at the end are left out with a note. Tensor names written
// unescaped are escaped first (import/timeline_events.h).
//
// Errors (INVALID_ARGUMENT) name the file, the event's index and line, its
// name and the field: an E with no open B, an E before its B, a missing
// pid, tid or ts, a time outside 2000..2100, invalid JSON.
#ifndef MERIDIAN_IMPORT_BLUEFOG_TIMELINE_READER_H_
#define MERIDIAN_IMPORT_BLUEFOG_TIMELINE_READER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "import/imported_trace.h"
#include "import/timeline_events.h"

namespace meridian {

// `json` is taken by value: the reader pads it for the parser. Sets
// ImportedTrace::format to "bluefog".
absl::StatusOr<ImportedTrace> ReadBluefogTimeline(std::string json,
                                                  const ImportOptions& options);

// The rank in a Bluefog timeline's path: the number that ends its base
// name before ".json" (and ".gz"): "/p/tl12.json" is 12; -1 if none.
int32_t BluefogRankFromPath(std::string_view path);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_BLUEFOG_TIMELINE_READER_H_
