#include "query/query_service.h"

#include <memory>
#include <optional>

#include "collector/store.h"
#include "query/chrome_trace.h"
#include "query/job_clocks.h"
#include "query/span_selection.h"
#include "query/stats.h"

namespace meridian {
namespace {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

// A read connection, the job's catalog and the filter's selection.
struct JobQuery {
  std::unique_ptr<Store> store;
  JobCatalog catalog;
  std::optional<SpanSelection> selection;
};

absl::StatusOr<JobQuery> OpenJob(const std::string& db_path,
                                 const v1::SpanFilter& filter) {
  if (filter.job().empty()) {
    return absl::InvalidArgumentError(
        "no job given; `meridian jobs` lists the jobs");
  }
  JobQuery query;
  StoreOptions options;
  options.read_only = true;
  auto store = Store::Open(db_path, options);
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

}  // namespace

grpc::Status QueryService::ListJobs(grpc::ServerContext*,
                                    const v1::ListJobsRequest*,
                                    v1::ListJobsReply* reply) {
  StoreOptions options;
  options.read_only = true;
  auto store = Store::Open(db_path_, options);
  if (!store.ok()) return ToGrpc(store.status());
  auto jobs = (*store)->ListJobs();
  if (!jobs.ok()) return ToGrpc(jobs.status());
  for (const JobInfo& job : *jobs) {
    v1::JobSummary* out = reply->add_jobs();
    out->set_job(job.name);
    out->set_ranks(job.ranks);
    out->set_nodes(job.nodes);
    out->set_spans(job.spans);
    out->set_start_ns(job.spans > 0 ? job.min_start_ns : 0);
    out->set_end_ns(job.spans > 0 ? job.max_end_ns : 0);
  }
  return grpc::Status::OK;
}

grpc::Status QueryService::ExportTrace(
    grpc::ServerContext* context, const v1::ExportRequest* request,
    grpc::ServerWriter<v1::TraceChunk>* writer) {
  auto query = OpenJob(db_path_, request->filter());
  if (!query.ok()) return ToGrpc(query.status());
  // Times on the collector's clock (JobClocks) unless raw ones are asked
  // for; the trace's origin is then the earliest corrected time.
  std::optional<JobClocks> clocks;
  if (!request->raw_clock()) {
    auto loaded = JobClocks::Load(*query->store, query->catalog);
    if (!loaded.ok()) return ToGrpc(loaded.status());
    clocks.emplace(std::move(*loaded));
  }
  v1::TraceChunk chunk;
  ChromeTraceWriter trace(
      query->catalog, *query->selection, [&](absl::string_view data) {
        chunk.set_data(data.data(), data.size());
        return !context->IsCancelled() && writer->Write(chunk);
      });
  if (clocks) trace.set_origin_ns(clocks->epoch_ns());
  trace.Begin();
  absl::Status status = query->store->Scan(
      query->catalog.job, ScanRangeOf(request->filter()),
      [&](const StoredSpan& span) {
        if (!query->selection->Selects(span)) return true;
        if (clocks) {
          const JobClocks::Interval shown = clocks->Place(span);
          trace.Add(span, shown.start_ns, shown.dur_ns);
        } else {
          trace.Add(span);
        }
        return trace.ok();
      });
  if (!status.ok()) return ToGrpc(status);
  if (!trace.End()) {
    return grpc::Status(grpc::StatusCode::CANCELLED,
                        "the client stopped reading the trace");
  }
  return grpc::Status::OK;
}

grpc::Status QueryService::GetClocks(grpc::ServerContext*,
                                     const v1::ClocksRequest* request,
                                     v1::ClocksReply* reply) {
  v1::SpanFilter filter;
  filter.set_job(request->job());
  auto query = OpenJob(db_path_, filter);
  if (!query.ok()) return ToGrpc(query.status());
  auto clocks = JobClocks::Load(*query->store, query->catalog);
  if (!clocks.ok()) return ToGrpc(clocks.status());
  *reply = clocks->Report();
  return grpc::Status::OK;
}

grpc::Status QueryService::GetStats(grpc::ServerContext*,
                                    const v1::StatsRequest* request,
                                    v1::StatsReply* reply) {
  auto query = OpenJob(db_path_, request->filter());
  if (!query.ok()) return ToGrpc(query.status());
  StatsBuilder stats(query->catalog, *query->selection);
  absl::Status status =
      query->store->Scan(query->catalog.job, ScanRangeOf(request->filter()),
                         [&](const StoredSpan& span) {
                           if (query->selection->Selects(span)) stats.Add(span);
                           return true;
                         });
  if (!status.ok()) return ToGrpc(status);
  *reply = stats.Finish();
  return grpc::Status::OK;
}

}  // namespace meridian
