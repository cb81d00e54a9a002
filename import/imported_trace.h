// ImportedTrace: what an importer read from one file (meridian import),
// held whole before anything is sent, so that a file is all in or all out:
// processes, tracks and spans with their names as strings.
//
// ToBatches turns it into self-contained Ingest batches (spans as chunks,
// as agents send them) under one import's agent id, numbered from 1: the
// same file imported again with the same options gives the same batches,
// which the collector stores once.
#ifndef MERIDIAN_IMPORT_IMPORTED_TRACE_H_
#define MERIDIAN_IMPORT_IMPORTED_TRACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "meridian/v1/span.pb.h"
#include "wire/batch_builder.h"
#include "wire/process_totals.h"

namespace meridian {

struct ImportedArg {
  std::string key;
  std::variant<std::string, int64_t, double> value;
};

struct ImportedTrack {
  int process = 0;  // index into ImportedTrace::processes
  v1::TrackKind kind = v1::TRACK_KIND_THREAD;
  int64_t id = 0;  // thread, stream or queue id within the process
  std::string name;
};

struct ImportedSpan {
  int track = 0;  // index into ImportedTrace::tracks
  v1::Category category = v1::CATEGORY_USER;
  v1::SpanKind kind = v1::SPAN_KIND_COMPLETE;
  std::string name;
  int64_t start_ns = 0;  // Unix epoch ns on the file's node's clock
  int64_t dur_ns = 0;
  int64_t bytes = 0;
  std::optional<int32_t> peer;
  std::optional<int32_t> tag;
  uint64_t comm = 0;
  uint32_t comm_size = 0;
  std::optional<uint64_t> seq;
  std::optional<int64_t> step;
  std::optional<int32_t> partition;
  uint64_t correlation = 0;
  double value = 0;  // SPAN_KIND_COUNTER
  std::vector<ImportedArg> args;
  int64_t event = 0;  // index of the file's event it came from (messages)
};

// Statistics a tool measured without spans (an mpitrace profile): stored
// as totals (v1::ImportedOpTotals), shown by `meridian stats`.
struct ImportedSize {
  int32_t log2 = -1;  // bytes in [2^log2, 2^(log2+1)); -1: 0 bytes
  int64_t calls = 0;
  int64_t bytes = 0;
  int64_t dur_ns = 0;
};

struct ImportedOpTotals {
  int process = 0;  // index into ImportedTrace::processes
  v1::Category category = v1::CATEGORY_MPI;
  std::string name;
  int64_t calls = 0;
  int64_t bytes = 0;
  int64_t dur_ns = 0;
  std::vector<ImportedSize> sizes;  // ascending log2
};

// A process's totals (wire/process_totals.h), as read: whose they are.
struct ImportedProcessTotals : ProcessTotals {
  int process = 0;  // index into ImportedTrace::processes
};

struct ImportedTrace {
  std::string format;  // "chrome", "kineto", "meridian", "horovod", ...
  std::vector<ProcessDesc> processes;
  std::vector<ImportedTrack> tracks;
  std::vector<ImportedSpan> spans;
  std::vector<ImportedOpTotals> op_totals;
  std::vector<ImportedProcessTotals> process_totals;
  // What the importer says about the file besides errors (events of kinds
  // it does not import, duplicates skipped, where times were placed).
  std::vector<std::string> notes;
};

// Batches of at most `max_spans` spans; the totals go in the first. With
// `clock_offset_ns`, each batch carries a clock model saying that the trace's
// node is that far ahead of the collector (--clock-offset-ns): every process of
// `trace` must be on one node (a batch carries one model).
std::vector<v1::Batch> ToBatches(const ImportedTrace& trace,
                                 const std::string& agent_id,
                                 std::optional<int64_t> clock_offset_ns,
                                 size_t max_spans = 50000);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_IMPORTED_TRACE_H_
