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

// Copies `from` (read in one snapshot) into `to`; `progress`, if given, is
// called after each job with its name and spans.
absl::StatusOr<CopyReport> CopyStore(
    Store& from, Store& to,
    const std::function<void(const std::string& job, int64_t spans)>& progress =
        nullptr);

}  // namespace meridian

#endif  // MERIDIAN_STORE_STORE_COPY_H_
