// Reads a Horovod timeline (HOROVOD_TIMELINE) into an ImportedTrace, whole
// or not at all.
//
// The file: one JSON array that rank 0, the coordinator, writes for every
// rank, closed (Horovod 0.20.1 and later) or never closed (records ending
// "},\n", before). Each tensor is a pid, named by an `M process_name`
// record; pid 0's process_name carries args.start_time_since_epoch_in_micros
// (0.20.1 and later), what ts 0 is. No event has a tid. Per tensor:
//
//   B NEGOTIATE_ALLREDUCE            rank 0 waits for every rank's request
//     X "1" dur 0, X "0" dur 0 ...   rank 1, then rank 0, reported ready
//   E
//   B ALLREDUCE                      the response, processed
//     B WAIT_FOR_DATA / E
//     B MEMCPY_IN_FUSION_BUFFER / E
//     B NCCL_ALLREDUCE / E
//   E args {dtype, shape}            the tensor's type and shape
//
// and `i CYCLE_START` (no pid) marks each cycle of the background thread.
//
// What it becomes: one process, rank 0's (options.rank, else 0), on
// options.node, else the file's base name. Per tensor a track of kind
// TRACK_KIND_QUEUE, id = its pid, named after the tensor; on it:
//   - every B/E pair (E closes the innermost open B of its pid) and every
//     other X as a span named by FrameworkOp (import/framework_ops.h):
//     NCCL_*, MPI_*, GLOO_*, CCL_* communication spans, the rest
//     (negotiation, the response, waiting, queueing, copies) CATEGORY_USER
//     phases;
//   - each ready tick as a SPAN_KIND_INSTANT "rank N ready" with the arg
//     rank = N;
//   - bytes = the tensor's size (element count x dtype size, from the final
//     E's dtype and shape, also kept as args) on the response and on each
//     communication span inside it. Hierarchical allreduce's parts each
//     move less than that; the span says what tensor it served.
// Cycle markers: instants "CYCLE_START" on a TRACK_KIND_THREAD track, id 0,
// "Horovod background thread".
//
// Times: ts is integer µs since the timeline started (a steady clock):
// placed by import/time_base.h (the file's epoch header, else
// options.epoch_ns, else options.fallback_end_ns). B events still open at
// the end (the file was cut while they ran) are left out with a note.
// Tensor names Horovod wrote unescaped are escaped first
// (import/timeline_events.h).
//
// Errors (INVALID_ARGUMENT) name the file, the event's index and line, its
// name and the field: an E with no open B, an E before its B, a missing
// pid or ts, a time outside 2000..2100, invalid JSON.
#ifndef MERIDIAN_IMPORT_HOROVOD_TIMELINE_READER_H_
#define MERIDIAN_IMPORT_HOROVOD_TIMELINE_READER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "import/imported_trace.h"
#include "import/timeline_events.h"

namespace meridian {

// `json` is taken by value: the reader pads it for the parser. Sets
// ImportedTrace::format to "horovod".
absl::StatusOr<ImportedTrace> ReadHorovodTimeline(std::string json,
                                                  const ImportOptions& options);

// The bytes of a tensor of Horovod's `dtype` ("HOROVOD_FLOAT32", or
// "float32") and `shape` ("[2, 3]"; "[]" is a scalar); 0 if either is
// unknown or the size is absurd (2^56 bytes or more).
int64_t HorovodTensorBytes(std::string_view dtype, std::string_view shape);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_HOROVOD_TIMELINE_READER_H_
