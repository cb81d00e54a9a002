#include "query/job_analysis.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "query/analysis/critical_path.h"
#include "query/analysis/streamed_path.h"

namespace meridian {

absl::Status CheckBudget(const JobInfo& job, uint64_t budget,
                         uint64_t bytes_per_span) {
  if (static_cast<uint64_t>(job.spans) * bytes_per_span <= budget) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "job ", job.name, " has ", job.spans,
      " spans: analysing it whole would take about ",
      static_cast<uint64_t>(job.spans) * bytes_per_span >> 20,
      " MiB, over this collector's --analysis-memory-mib ", budget >> 20,
      bytes_per_span == kReplayBytesPerSpan
          ? "; replay a range of steps (--steps A:B) or raise the limit"
          : "; analyse one step (--step N) or raise the limit"));
}

void SaveNewClocks(const SaveClocks& save, const JobInfo& job,
                   const JobClocks& clocks) {
  if (save && clocks.new_solution()) {
    save(job.id, *clocks.new_solution());
  }
}

absl::StatusOr<JobClocks> WholeJobClocks(
    const JobQuery& query, bool resolve, const SaveClocks& save,
    const std::atomic<bool>* cancel, ClockSolveState* state,
    const std::optional<StoredJobResult>* stored, EvidenceLog* log) {
  absl::StatusOr<JobClocks> clocks = absl::UnknownError("not solved");
  if (resolve) {
    JobRead read;
    read.cancel = cancel;
    clocks = JobClocks::Load(*query.store, query.catalog, nullptr, read);
  } else {
    const std::optional<StoredJobResult> read =
        stored != nullptr ? *stored
                          : StoredClocks(*query.store, query.catalog.job);
    clocks = JobClocks::Update(*query.store, query.catalog, &read, cancel,
                               nullptr, state, log);
  }
  if (!clocks.ok()) return clocks.status();
  SaveNewClocks(save, query.catalog.job, *clocks);
  return clocks;
}

absl::StatusOr<StepSummaries::Made> UpdateSummaries(
    const JobQuery& query, uint64_t budget, const SaveSummaries& save,
    const std::atomic<bool>* cancel) {
  auto made =
      StepSummaries::Update(*query.store, query.catalog, budget, cancel);
  if (!made.ok()) return made.status();
  if (!made->current && save) {
    save(query.catalog.job.id, made->steps, made->state);
  }
  return made;
}

absl::StatusOr<v1::CriticalPathReply> StreamedPathOf(
    const JobQuery& query, uint64_t budget, const SaveClocks& save,
    std::optional<JobClocks>* clocks_out) {
  const JobInfo& job = query.catalog.job;
  // The caller holds StreamedBytes of the analysis budget.
  auto range = query.store->StepRange(job.id);
  if (!range.ok()) return range.status();
  if (!*range) {
    return absl::NotFoundError(absl::StrCat("job ", job.name, " has no steps"));
  }
  const int64_t per_step = std::max<int64_t>(
      1, job.spans / ((*range)->second - (*range)->first + 1));
  // A block holds a step and the one before it, at least.
  if (static_cast<uint64_t>(2 * per_step) * kAnalysisBytesPerSpan > budget) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "job ", job.name, "'s steps have about ", per_step,
        " spans each: walking its path two steps at a time would take about ",
        static_cast<uint64_t>(2 * per_step) * kAnalysisBytesPerSpan >> 20,
        " MiB, over this collector's --analysis-memory-mib ", budget >> 20,
        "; analyse one step (--step N) or raise the limit"));
  }
  auto clocks = WholeJobClocks(query, false, save);
  if (!clocks.ok()) return clocks.status();
  const std::optional<StoredJobResult> stored = SolutionOf(query, *clocks);
  const int64_t block_spans = std::min<int64_t>(
      kBlockSpans, static_cast<int64_t>(budget / kAnalysisBytesPerSpan));
  ScanStats read;
  auto path = StreamedCriticalPath(
      *query.store, query.catalog, stored, block_spans,
      static_cast<int64_t>(budget / kAnalysisBytesPerSpan), &read);
  if (absl::IsResourceExhausted(path.status())) {
    return absl::ResourceExhaustedError(absl::StrCat(
        path.status().message(),
        ": walking the path through them would take more than this "
        "collector's --analysis-memory-mib ",
        budget >> 20, "; raise the limit, or analyse one step (--step N)"));
  }
  if (!path.ok()) return path.status();
  path->set_chunks_read(static_cast<int64_t>(read.chunk_ids.size()));
  path->set_chunks(job.chunks);
  if (clocks_out != nullptr) clocks_out->emplace(std::move(*clocks));
  return path;
}

uint64_t StreamedBytes(const JobCatalog& catalog, uint64_t budget,
                       uint64_t bytes_per_span) {
  return std::max(
      SolveBytes(catalog),
      BlockBytes(catalog,
                 std::min<int64_t>(kBlockSpans, budget / bytes_per_span),
                 bytes_per_span));
}

std::string Reserving(const char* kind, const JobInfo& job) {
  return absl::StrCat(kind, " of job ", job.name);
}

std::optional<StepRange> StepsOf(std::optional<int64_t> step) {
  if (!step) return std::nullopt;
  return StepRange{*step, *step};
}

absl::StatusOr<std::unique_ptr<JobAnalysis>> LoadAnalysis(
    AnalysisMemory& memory, JobQuery query, std::optional<StepRange> steps,
    uint64_t bytes_per_span, const SaveClocks& save,
    const std::optional<StoredJobResult>* solution, uint64_t also_bytes) {
  const uint64_t budget = memory.budget();
  uint64_t bytes = 0;
  if (!steps) {
    absl::Status within =
        CheckBudget(query.catalog.job, budget, bytes_per_span);
    if (!within.ok()) return within;
    bytes = WholeBytes(query.catalog, bytes_per_span);
  } else {
    auto range = query.store->StepRange(query.catalog.job.id);
    if (!range.ok()) return range.status();
    const int64_t job_steps =
        *range ? (*range)->second - (*range)->first + 1 : 0;
    // last - first + 1, without overflow for a client's extreme range.
    const uint64_t asked = static_cast<uint64_t>(steps->last) -
                           static_cast<uint64_t>(steps->first) + 1;
    bytes = StepsBytes(query.catalog,
                       asked > static_cast<uint64_t>(INT64_MAX)
                           ? INT64_MAX
                           : static_cast<int64_t>(asked),
                       job_steps, bytes_per_span);
  }
  auto lease = memory.Reserve(
      bytes + also_bytes,
      Reserving(steps ? "an analysis of some steps" : "an analysis",
                query.catalog.job));
  if (!lease.ok()) return lease.status();
  auto analysis = std::make_unique<JobAnalysis>();
  analysis->lease = std::move(*lease);
  analysis->query = std::move(query);
  Store& store = *analysis->query.store;
  const JobCatalog& catalog = analysis->query.catalog;
  const std::optional<StoredJobResult> stored =
      solution != nullptr ? *solution : StoredClocks(store, catalog.job);
  const int64_t max_spans = static_cast<int64_t>(budget / bytes_per_span);
  absl::StatusOr<JobSpans> spans =
      steps
          ? JobSpans::LoadSteps(store, catalog, steps->first, steps->last,
                                &analysis->clocks, &analysis->read, &stored,
                                nullptr, max_spans)
          : JobSpans::Load(
                store, catalog, &analysis->clocks,
                JobRead{{ScanRange{}}, std::nullopt, &analysis->read}, &stored);
  if (steps && absl::IsResourceExhausted(spans.status())) {
    const bool one = steps->first == steps->last;
    return absl::ResourceExhaustedError(absl::StrCat(
        "job ", catalog.job.name, one ? "'s step " : "'s steps ", steps->first,
        one ? "" : absl::StrCat("..", steps->last), one ? " holds" : " hold",
        " more than ", max_spans, " spans: analysing ", one ? "it" : "them",
        " would take more than this collector's --analysis-memory-mib ",
        budget >> 20,
        one ? "; raise the limit"
            : "; raise the limit, or "
              "analyse fewer steps"));
  }
  if (!spans.ok()) return spans.status();
  if (!steps) SaveNewClocks(save, catalog.job, *analysis->clocks);
  analysis->spans.emplace(std::move(*spans));
  analysis->graph.emplace(*analysis->spans);
  return analysis;
}

absl::StatusOr<std::unique_ptr<JobAnalysis>> LoadAnalysis(
    AnalysisMemory& memory, const std::string& db_path, const std::string& job,
    std::optional<StepRange> steps, uint64_t bytes_per_span) {
  auto query = OpenJob(db_path, job);
  if (!query.ok()) return query.status();
  return LoadAnalysis(memory, std::move(*query), steps, bytes_per_span);
}

absl::StatusOr<v1::CriticalPathReply> PathOf(const JobAnalysis& analysis,
                                             std::optional<int64_t> step) {
  TimeWindow window = JobWindow(*analysis.spans);
  if (step) {
    auto step_window = StepWindow(*analysis.spans, *step);
    if (!step_window) {
      return StepNotFound(analysis.query.catalog.job.name, *step);
    }
    window = *step_window;
  }
  v1::CriticalPathReply path = CriticalPath(*analysis.graph, window);
  path.set_job(analysis.query.catalog.job.name);
  if (step) path.set_step(*step);
  path.set_chunks_read(static_cast<int64_t>(analysis.read.chunk_ids.size()));
  path.set_chunks(analysis.query.catalog.job.chunks);
  return path;
}

}  // namespace meridian
