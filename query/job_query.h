// JobQuery: a query's view of one job: a read connection to the store (its
// own snapshot), the job's catalog and the filter's selection, and what is
// stored of the job's derived results (its clock solution, whether its
// step summaries are current).
#ifndef MERIDIAN_QUERY_JOB_QUERY_H_
#define MERIDIAN_QUERY_JOB_QUERY_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "meridian/v1/query.pb.h"
#include "query/ops/span_selection.h"
#include "store/store.h"

namespace meridian {

class JobClocks;

// A read connection, the job's catalog and the filter's selection.
struct JobQuery {
  std::unique_ptr<Store> store;
  JobCatalog catalog;
  std::optional<SpanSelection> selection;
};

// The status a client is answered with for `status`.
grpc::Status ToGrpc(const absl::Status& status);

// A query's reading of the store, whose errors go to the client: they name
// it without its path (StoreOptions::name_in_errors).
StoreOptions QueryStoreOptions();

// Opens the store at `db_path` for a query of `filter`'s job: a snapshot,
// the catalog and the selection. INVALID_ARGUMENT without a job or with a
// bad filter, NOT_FOUND for an unknown job.
absl::StatusOr<JobQuery> OpenJob(const std::string& db_path,
                                 const v1::SpanFilter& filter);
// All of job `job`: OpenJob with a filter naming the job only.
absl::StatusOr<JobQuery> OpenJob(const std::string& db_path,
                                 const std::string& job);

// The job's stored clock solution; nullopt if there is none or it cannot be
// read (that only costs a solve).
std::optional<StoredJobResult> StoredClocks(Store& store, const JobInfo& job);
// The whole job's solution `clocks` hold: the one it computed, else the
// stored one it took.
std::optional<StoredJobResult> SolutionOf(const JobQuery& query,
                                          const JobClocks& clocks);
// Whether `stored` (a clock solution or a summary state) is of `job` as it
// is now: its spans and last write.
bool IsOf(const StoredJobResult& stored, const JobInfo& job);
// Whether the job's step summaries are of it as it is now (an error reads
// as not: the update says what it is).
bool SummariesCurrent(Store& store, const JobInfo& job);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_JOB_QUERY_H_
