// `meridian export`: a job's merged timeline in the format a viewer or
// analyst reads (docs/import-export.md):
//   --format chrome    Trace Event Format JSON (default; chrome://tracing,
//                      Perfetto UI)
//   --format perfetto  Perfetto's protobuf trace (default for FILE.pftrace
//                      and FILE.perfetto-trace): smaller, no size ceiling
//   --format kineto    PyTorch profiler JSON, one rank per file, for
//                      Holistic Trace Analysis and TensorBoard: with
//                      --per-rank DIR, or a filter of one rank
// and how to cut it:
//   -o FILE[.gz]       one file; ".gz" compresses it (gzip)
//   --per-rank DIR     one file per rank in DIR: JOB_R.pt.trace.json
//                      (kineto), JOB_rank_R.json or .pftrace
//   --split-by step N  files of N steps each: FILE with ".steps-A-B"
//                      before its extension
//   --split-by rank N  files of N ranks each: ".ranks-A-B"
// Each file is streamed from the collector, written beside its name and
// renamed when complete; progress on stderr when it is a terminal. The job's
// description must come within --request-timeout, and each chunk of a
// file within --request-timeout of the one before (cli/collector_call.h):
// a file may take as long as it needs while chunks keep coming.
#ifndef MERIDIAN_CLI_EXPORT_COMMAND_H_
#define MERIDIAN_CLI_EXPORT_COMMAND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/collector_call.h"
#include "meridian/v1/query.grpc.pb.h"

namespace meridian {

struct ExportOptions {
  v1::SpanFilter filter;
  std::string output;        // -o
  std::string format;        // "", "chrome", "perfetto", "kineto"
  std::string per_rank_dir;  // --per-rank
  std::string split_by;      // "", "step", "rank"
  int64_t split_every = 0;   // N of --split-by
  bool raw_clock = false;
  bool critical_path = false;
};

// One file of an export: its name and what it holds.
struct ExportPart {
  std::string path;
  v1::SpanFilter filter;
};

// The format of an export: --format, else from the output's name.
absl::StatusOr<v1::ExportFormat> ExportFormatOf(const ExportOptions& options);

// The files an export writes, given the job's ranks and steps (from
// ListJobs with the job): INVALID_ARGUMENT for options that do not fit
// (both -o and --per-rank, a split of a job without steps, ...).
absl::StatusOr<std::vector<ExportPart>> PlanExport(const ExportOptions& options,
                                                   v1::ExportFormat format,
                                                   const v1::JobSummary& job);

// Runs the export; says what it wrote on stdout and why not on stderr.
// 0 if every file was written; 1 after an RPC or write failure; 2 for
// options that do not fit.
int ExportJob(v1::Query::Stub& stub, const CollectorTarget& collector,
              const ExportOptions& options);

}  // namespace meridian

#endif  // MERIDIAN_CLI_EXPORT_COMMAND_H_
