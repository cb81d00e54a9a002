// CopyStore: copies every job of one store into another (`meridian-collector
// --migrate-from SQLITE --store clickhouse://...`, issue 22): processes,
// tracks, spans with every field and arg, the clock models of each job's
// nodes and imported statistics. Jobs travel as batches of the agent
// "migrate/JOB", numbered from 1 in the source's order, validated as a
// collector validates any batch and written through Store::Write: a copy
// stopped midway and run again stores each span once (what was copied
// comes back as duplicates).
//
// What does not travel: which agents sent a job (its clock models are now
// the migration's, the same models for the same nodes), when it was
// written (retention counts from the copy), and per-process world sizes
// (each process gets its job's).
#ifndef MERIDIAN_STORE_STORE_COPY_H_
#define MERIDIAN_STORE_STORE_COPY_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "store/store.h"

namespace meridian {

struct CopyReport {
  int64_t jobs = 0;
  int64_t spans = 0;    // stored now
  int64_t batches = 0;  // written, duplicates included
  int64_t duplicates = 0;
};

// Which jobs a copy takes and when it stops (`meridian sql` on a ClickHouse
// store copies one job: query/sql/sql_copy.h). By default every job, with
// no bound.
struct CopyBounds {
  // Only this job (read by name: the others are not listed), if set.
  std::optional<std::string> only;
  // The jobs copied; unset: every job.
  std::function<bool(const std::string& job)> which;
  // A job of more spans than this is not copied: RESOURCE_EXHAUSTED naming
  // the job and the bound, before any of it is written (0: no bound).
  int64_t max_spans = 0;
  // Called before each job, each node's clock models and each batch of
  // spans (kBatchSpans); a status other than OK stops the copy, which
  // returns it. (A request to the source in progress is not interrupted.)
  std::function<absl::Status()> check;
};

// Copies `from` (read in one snapshot) into `to`; `progress`, if given, is
// called after each job with its name and spans.
absl::StatusOr<CopyReport> CopyStore(
    Store& from, Store& to,
    const std::function<void(const std::string& job, int64_t spans)>& progress =
        nullptr,
    const CopyBounds& bounds = {});

}  // namespace meridian

#endif  // MERIDIAN_STORE_STORE_COPY_H_
