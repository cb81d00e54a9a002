#include "testing/solved_job.h"

#include <utility>

#include "query/clocks/job_clocks.h"
#include "testing/test_store.h"

namespace meridian {

absl::StatusOr<SolvedJob> WriteSolvedJob(
    const std::string& location, const std::string& job,
    const std::function<absl::Status(Store&)>& write) {
  auto path = NewStoreLocation(StoreKindFromEnvironment(), location);
  if (!path.ok()) return path.status();
  StoreOptions options;
  options.full_sync = false;
  {
    auto writer = Store::Open(*path, options);
    if (!writer.ok()) return writer.status();
    if (absl::Status s = write(**writer); !s.ok()) return s;
    auto catalog = (*writer)->LoadCatalog(job);
    if (!catalog.ok()) return catalog.status();
    auto clocks = JobClocks::Load(**writer, *catalog);
    if (!clocks.ok()) return clocks.status();
    if (!clocks->new_solution()) {
      return absl::InternalError("a whole-job solve made no solution");
    }
    absl::Status saved =
        (*writer)->SaveClockSolution(catalog->job.id, *clocks->new_solution());
    if (!saved.ok()) return saved;
  }
  options.read_only = true;
  auto reader = Store::Open(*path, options);
  if (!reader.ok()) return reader.status();
  SolvedJob out;
  out.store = std::move(*reader);
  if (absl::Status s = out.store->BeginSnapshot(); !s.ok()) return s;
  auto catalog = out.store->LoadCatalog(job);
  if (!catalog.ok()) return catalog.status();
  out.catalog = std::move(*catalog);
  auto stored = out.store->LoadClockSolution(out.catalog.job.id);
  if (!stored.ok()) return stored.status();
  if (!*stored) return absl::InternalError("the solution was not stored");
  out.stored = std::move(*stored);
  return out;
}

}  // namespace meridian
