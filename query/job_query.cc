#include "query/job_query.h"

#include <utility>

#include "query/clocks/job_clocks.h"

namespace meridian {

StoreOptions QueryStoreOptions() {
  StoreOptions options;
  options.read_only = true;
  options.name_in_errors = "the collector's store";
  return options;
}

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

absl::StatusOr<JobQuery> OpenJob(const std::string& db_path,
                                 const v1::SpanFilter& filter) {
  if (filter.job().empty()) {
    return absl::InvalidArgumentError(
        "no job given; `meridian jobs` lists the jobs");
  }
  JobQuery query;
  auto store = Store::Open(db_path, QueryStoreOptions());
  if (!store.ok()) return store.status();
  query.store = std::move(*store);
  absl::Status snapshot = query.store->BeginSnapshot();
  if (!snapshot.ok()) return snapshot;
  auto catalog = query.store->LoadCatalog(filter.job());
  if (!catalog.ok()) return catalog.status();
  query.catalog = std::move(*catalog);
  auto selection = SpanSelection::Make(query.catalog, filter);
  if (!selection.ok()) return selection.status();
  query.selection = std::move(*selection);
  return query;
}

absl::StatusOr<JobQuery> OpenJob(const std::string& db_path,
                                 const std::string& job) {
  v1::SpanFilter filter;
  filter.set_job(job);
  return OpenJob(db_path, filter);
}

std::optional<StoredJobResult> StoredClocks(Store& store, const JobInfo& job) {
  auto stored = store.LoadClockSolution(job.id);
  return stored.ok() ? *stored : std::nullopt;
}

std::optional<StoredJobResult> SolutionOf(const JobQuery& query,
                                          const JobClocks& clocks) {
  return clocks.new_solution() ? clocks.new_solution()
                               : StoredClocks(*query.store, query.catalog.job);
}

bool IsOf(const StoredJobResult& stored, const JobInfo& job) {
  return stored.spans == job.spans && stored.written_ns == job.written_ns;
}

bool SummariesCurrent(Store& store, const JobInfo& job) {
  auto state = store.LoadSummaryState(job.id);
  return state.ok() && state->has_value() && IsOf(**state, job);
}

}  // namespace meridian
