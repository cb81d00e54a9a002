// Reads Chrome Trace Event Format JSON (the array or the object form) into
// an ImportedTrace, whole or not at all. Three dialects, told apart by
// content:
//   - "kineto": PyTorch profiler traces (schemaVersion, deviceProperties,
//     distributedInfo or baseTimeNanoseconds at the top level): one
//     process, the rank from distributedInfo; GPU activity (pid = device,
//     tid = stream) on GPU stream tracks; Kineto's categories; NCCL kernels
//     as NCCL spans named by their collective, with bytes from the element
//     count and dtype when the args carry them;
//   - "meridian": `meridian export` output (otherData.epoch_ns): ranks and
//     nodes from "rank N (host)", track kinds from thread_sort_index, and
//     the span fields it writes as args (bytes, peer, tag, comm,
//     comm_size, seq, step, partition, correlation) restored;
//   - "chrome": anything else; each pid a process.
// Phases: X, B/E (paired per thread; they must nest), i/I/R, C (a counter
// span per numeric arg), M (process and thread names and sort indexes),
// s/t/f flows (their two ends share a correlation id), b/e/n nestable
// async (a queue track per category). Others are counted and skipped.
// ts and dur are microseconds, read exactly from their text; pid and tid
// may be numbers or strings.
//
// Times: absolute when the trace gives an epoch (Kineto's
// baseTimeNanoseconds, Meridian's otherData.epoch_ns) or its times are
// Unix-epoch microseconds already; otherwise options.epoch_ns, else the
// trace is placed to end at options.fallback_end_ns (the file's
// modification time) and a note says so.
//
// Errors name the file, the event's index in traceEvents (and its name)
// and the field; a JSON syntax error names the line and column.
#ifndef MERIDIAN_IMPORT_CHROME_TRACE_READER_H_
#define MERIDIAN_IMPORT_CHROME_TRACE_READER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "import/import_options.h"
#include "import/imported_trace.h"

namespace meridian {

// How it reads `options` (import_options.h): `node`, the node every process
// ran on ("": from the trace, Meridian's "rank N (host)", else `file`'s
// base name, so that files of different machines keep their clocks apart);
// `rank`, the first process's rank, the next ones following, unless the
// trace says (Kineto's distributedInfo, Meridian's "rank N"); -1: from 0;
// `format`, a dialect forced ("chrome", "kineto", "meridian"; "": detect).
// `json` is taken by value: the reader pads it for the parser.
absl::StatusOr<ImportedTrace> ReadChromeTrace(std::string json,
                                              const ImportOptions& options);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_CHROME_TRACE_READER_H_
