// QueryService's exports (query_service.h): the trace in Chrome, Perfetto
// or Kineto form, and a step's dependency graph.
#include <functional>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "query/analysis/critical_path.h"
#include "query/clocks/shown_window.h"
#include "query/export/chrome_trace.h"
#include "query/export/graph_writer.h"
#include "query/export/kineto_trace.h"
#include "query/export/perfetto_trace.h"
#include "query/job_analysis.h"
#include "query/job_query.h"
#include "query/query_service.h"
#include "query/trace_chunks.h"

namespace meridian {

namespace {

// The writer of `format` over the query's selection, writing to `sink`;
// INVALID_ARGUMENT if the selection does not suit the format (a Kineto
// trace is of one rank).
absl::StatusOr<std::unique_ptr<TraceWriter>> WriterOf(
    v1::ExportFormat format, const JobQuery& query,
    const std::function<bool(absl::string_view)>& sink) {
  switch (format) {
    case v1::EXPORT_FORMAT_PERFETTO:
      return std::make_unique<PerfettoTraceWriter>(query.catalog,
                                                   *query.selection, sink);
    case v1::EXPORT_FORMAT_KINETO: {
      absl::Status one_rank =
          KinetoTraceWriter::CheckSelection(query.catalog, *query.selection);
      if (!one_rank.ok()) return one_rank;
      return std::make_unique<KinetoTraceWriter>(query.catalog,
                                                 *query.selection, sink);
    }
    default:
      return std::make_unique<ChromeTraceWriter>(query.catalog,
                                                 *query.selection, sink);
  }
}

// Writes the selected spans of `filter`'s window to `trace`, placed by
// `clocks` (raw times if null), after the critical path if given.
grpc::Status WriteTrace(const JobQuery& query, const v1::SpanFilter& filter,
                        const JobClocks* clocks,
                        const std::optional<v1::CriticalPathReply>& path,
                        TraceWriter& trace) {
  // A time window can cut two ranks' messages at different points.
  trace.set_message_flows(!filter.has_from_ns() && !filter.has_to_ns());
  if (clocks) trace.set_origin_ns(clocks->epoch_ns());
  trace.Begin();
  if (path) trace.AddCriticalPath(*path);
  // A time window is cut on the timeline the trace shows: with the clocks,
  // on the corrected one (ShownWindow); raw, on the raw times, from the
  // job's first stored start (the raw trace's origin).
  ScanRange range = ScanRangeOf(filter, *query.selection);
  std::optional<ShownWindow> window;
  if (clocks) {
    window.emplace(filter, query.catalog, *clocks);
    range = window->Widen(std::move(range));
  }
  absl::Status status =
      query.store->Scan(query.catalog.job, range, [&](const StoredSpan& span) {
        if (!query.selection->Selects(span)) return true;
        if (clocks) {
          const JobClocks::Interval shown = clocks->Place(span);
          if (!window->Contains(shown)) return true;
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

}  // namespace

grpc::Status QueryService::ExportTrace(
    grpc::ServerContext* context, const v1::ExportRequest* request,
    grpc::ServerWriter<v1::TraceChunk>* writer) {
  if (grpc::Status may = MayReadJob(context, request->filter().job());
      !may.ok())
    return may;
  // What the export holds of the analysis budget, but for a loaded
  // analysis (which holds its own): first, so that it ends last.
  AnalysisMemory::Lease lease;
  auto opened = OpenJob(db_path_, request->filter());
  if (!opened.ok()) return ToGrpc(opened.status());
  // Times on the collector's clock (JobClocks) unless raw ones are asked
  // for; the trace's origin is then the earliest corrected time. With the
  // critical path, the analysis's load brings the clocks with it.
  std::unique_ptr<JobAnalysis> analysis;
  std::optional<JobClocks> own_clocks;
  const JobClocks* clocks = nullptr;
  std::optional<v1::CriticalPathReply> path;
  // The critical path of the one step asked for, else of the whole job.
  const v1::SpanFilter& f = request->filter();
  std::optional<int64_t> step;
  if (f.has_first_step() && f.has_last_step() &&
      f.first_step() == f.last_step()) {
    step = f.first_step();
  }
  const absl::Status within =
      CheckBudget(opened->catalog.job, analysis_budget_, kAnalysisBytesPerSpan);
  const bool whole_fits = within.ok();
  const JobCatalog& catalog = opened->catalog;
  const auto reserve = [&](uint64_t bytes) {
    auto reserved =
        memory_->Reserve(bytes, Reserving("an export", catalog.job));
    if (reserved.ok()) lease = std::move(*reserved);
    return reserved.status();
  };
  if (!request->raw_clock() && request->critical_path() && !whole_fits &&
      !step) {
    // Too large to load whole: the path walked a block of steps at a time
    // (NOT_FOUND: the job has no steps; then the refusal stands), the
    // spans streamed as without the path.
    if (absl::Status s = reserve(
            StreamedBytes(catalog, analysis_budget_, kAnalysisBytesPerSpan) +
            ScanBytes(catalog));
        !s.ok()) {
      return ToGrpc(s);
    }
    auto streamed =
        StreamedPathOf(*opened, analysis_budget_, save_clocks_, &own_clocks);
    if (absl::IsNotFound(streamed.status())) return ToGrpc(within);
    if (!streamed.ok()) return ToGrpc(streamed.status());
    path = std::move(*streamed);
    clocks = &*own_clocks;
  } else if (!request->raw_clock() && request->critical_path()) {
    // The job loaded whole, or only the step if the whole is too large,
    // placed by the whole job's clocks (brought up to date first, as the
    // export without the path is).
    std::optional<StoredJobResult> solution;
    if (!whole_fits) {
      if (absl::Status s = reserve(SolveBytes(catalog)); !s.ok()) {
        return ToGrpc(s);
      }
      auto job_clocks = JobClocksOf(*opened, false);
      if (!job_clocks.ok()) return ToGrpc(job_clocks.status());
      solution = SolutionOf(*opened, *job_clocks);
      lease = AnalysisMemory::Lease();  // the analysis reserves its own
    }
    const uint64_t scan = ScanBytes(catalog);
    auto loaded = LoadAnalysis(
        *memory_, std::move(*opened), whole_fits ? std::nullopt : StepsOf(step),
        kAnalysisBytesPerSpan, nullptr, whole_fits ? nullptr : &solution, scan);
    if (!loaded.ok()) return ToGrpc(loaded.status());
    analysis = std::move(*loaded);
    clocks = &*analysis->clocks;
    auto found = PathOf(*analysis, step);
    if (!found.ok()) return ToGrpc(found.status());
    path = std::move(*found);
  } else if (!request->raw_clock()) {
    if (absl::Status s = reserve(SolveBytes(catalog)); !s.ok()) {
      return ToGrpc(s);
    }
    auto loaded = JobClocksOf(*opened, false);
    if (!loaded.ok()) return ToGrpc(loaded.status());
    own_clocks.emplace(std::move(*loaded));
    clocks = &*own_clocks;
  } else if (absl::Status s = reserve(ScanBytes(catalog)); !s.ok()) {
    return ToGrpc(s);
  }
  JobQuery* query = analysis ? &analysis->query : &*opened;
  auto sink = [&](absl::string_view data) {
    return SendChunks(context, data, writer);
  };
  auto trace = WriterOf(request->format(), *query, sink);
  if (!trace.ok()) return ToGrpc(trace.status());
  return WriteTrace(*query, request->filter(), clocks, path, **trace);
}

grpc::Status QueryService::ExportGraph(
    grpc::ServerContext* context, const v1::GraphRequest* request,
    grpc::ServerWriter<v1::TraceChunk>* writer) {
  if (grpc::Status may = MayReadJob(context, request->job()); !may.ok())
    return may;
  auto analysis = WholeJob(request->job(), kAnalysisBytesPerSpan);
  if (!analysis.ok()) return ToGrpc(analysis.status());
  auto graph =
      StepGraph(*(*analysis)->graph, request->step(), request->format());
  if (!graph.ok()) return ToGrpc(graph.status());
  return WriteChunks(context, *graph, writer);
}

}  // namespace meridian
