// Reads a BytePS communication trace (BYTEPS_TRACE_ON:
// <BYTEPS_TRACE_DIR>/<local_rank>/comm.json) into an ImportedTrace, whole
// or not at all.
//
// The file: the object form, {"traceEvents": [...], "displayTimeUnit":
// "ms"}, every event an X of one tensor:
//   pid  "Comm.<tensor>" (a string);
//   tid  "total" for the tensor's whole synchronisation (enqueued to
//        done), else the partition key (declared_tensor_id << 16) +
//        partition_index, as a string ("26148864" = 399 << 16);
//   name "Comm.<tensor>" for the total, "Comm.<tensor>.<QUEUE>" for one
//        partition's time on one queue (PUSH, PULL, REDUCE, COPYD2H...),
//        counted from when it was enqueued there, so waiting included;
//   ts   Unix-epoch µs; dur µs.
// Only the root GPU of a node (by default the highest local rank) shows
// PUSH and PULL.
//
// What it becomes: one process, local_rank from the path's directory
// (<DIR>/3/comm.json: 3) when it is a number; rank options.rank, else -1
// (unknown: the path names the local rank only; a note says so); node
// options.node, else <DIR> as the path names it (the GPUs of one node
// write under one directory and share its clock), else the path. Tracks of
// kind TRACK_KIND_QUEUE, ids in order of appearance:
//   "<tensor>"                  its totals, spans named "Comm" (phases);
//   "<tensor> partition <i>"    one partition's stages, spans named by the
//                               queue, partition = i, arg partition_key;
// categories by FrameworkOp (import/framework_ops.h): PUSH and PULL MPI,
// REDUCE and BROADCAST NCCL (communication spans), the rest
// CATEGORY_USER. The trace carries no sizes: bytes 0.
//
// Times: Unix-epoch µs, read exactly, placed by import/time_base.h (a
// file whose times are not absolute takes options.epoch_ns or
// fallback_end_ns like any relative trace).
//
// Errors (INVALID_ARGUMENT) name the file, the event's index and line, its
// name and the field: a pid that is no "Comm.<tensor>", a tid that is
// neither "total" nor a partition key, a name that is not its tensor's,
// a missing ts or dur, a time outside 2000..2100, invalid JSON.
#ifndef MERIDIAN_IMPORT_BYTEPS_TRACE_READER_H_
#define MERIDIAN_IMPORT_BYTEPS_TRACE_READER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "import/imported_trace.h"
#include "import/timeline_events.h"

namespace meridian {

// `json` is taken by value: the reader pads it for the parser. Sets
// ImportedTrace::format to "byteps".
absl::StatusOr<ImportedTrace> ReadBytePSTrace(std::string json,
                                              const ImportOptions& options);

// What a comm.json's path says: "/t/run/2/comm.json" is local rank 2 under
// "/t/run". local_rank -1 and trace_dir "" if its directory is no number.
struct BytePSPath {
  int32_t local_rank = -1;
  std::string trace_dir;  // "." for "2/comm.json"
};
BytePSPath ParseBytePSPath(std::string_view path);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_BYTEPS_TRACE_READER_H_
