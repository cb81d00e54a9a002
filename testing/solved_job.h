// WriteSolvedJob: a job written into a new store of the kind the test runs
// on (test_store.h), its clock solution solved over the whole job and
// stored as the collector's writer stores it, then the store opened again
// read-only, in a snapshot: what the tests of the analyses that place a
// job's blocks by its stored solution (streamed_path.h, streamed_replay.h)
// read.
//
//   auto job = WriteSolvedJob("streamed_blocks", "blocks",
//                             [&](Store& s) { return WriteSyntheticJob(j, s)
//                                                 .status(); });
//   StreamedCriticalPath(*job->store, job->catalog, job->stored, ...);
#ifndef MERIDIAN_TESTING_SOLVED_JOB_H_
#define MERIDIAN_TESTING_SOLVED_JOB_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "store/store.h"

namespace meridian {

struct SolvedJob {
  std::unique_ptr<Store> store;  // read-only, in a snapshot
  JobCatalog catalog;
  std::optional<StoredJobResult> stored;  // the job's clock solution
};

// `location`: the new store's name (NewStoreLocation); `job`: the job that
// `write` writes.
absl::StatusOr<SolvedJob> WriteSolvedJob(
    const std::string& location, const std::string& job,
    const std::function<absl::Status(Store&)>& write);

}  // namespace meridian

#endif  // MERIDIAN_TESTING_SOLVED_JOB_H_
