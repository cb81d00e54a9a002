// JobAnalysis: a job loaded for the analyses (its spans on the collector's
// clock and their dependency graph), what loading it reserves of the
// analysis budget, and the whole-job steps a query takes before it answers:
// the job's clocks and step summaries brought up to date, the critical path
// walked a block of steps at a time.
#ifndef MERIDIAN_QUERY_JOB_ANALYSIS_H_
#define MERIDIAN_QUERY_JOB_ANALYSIS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/memory.h"
#include "meridian/v1/query.pb.h"
#include "query/analysis/dependency_graph.h"
#include "query/analysis/job_spans.h"
#include "query/analysis/replay_report.h"
#include "query/analysis/step_breakdown.h"
#include "query/analysis/step_summaries.h"
#include "query/analysis_memory.h"
#include "query/clocks/clock_solve_state.h"
#include "query/clocks/job_clocks.h"
#include "query/job_query.h"
#include "query/query_costs.h"
#include "store/store.h"

namespace meridian {

// Stores a job's clock solution (QueryService::set_save_clocks).
using SaveClocks =
    std::function<void(int64_t job_id, const StoredJobResult& solution)>;
// Stores step summaries (QueryService::set_save_summaries).
using SaveSummaries = std::function<void(
    int64_t job_id, const std::vector<StoredStepSummary>& steps,
    const StoredJobResult& state)>;

// A job loaded for the analyses: its spans on the collector's clock and
// their dependency graph. Not movable: the spans refer to the catalog.
struct JobAnalysis {
  // First: what it reserved of the analysis budget is given back once its
  // memory is freed and returned.
  AnalysisMemory::Lease lease;
  // Then: when an analysis is let go, its memory, the largest a query
  // holds, goes back to the system (common/memory.h), not to the heap of
  // the thread that answered.
  ReturnsFreedMemory returns_memory;
  JobQuery query;
  std::optional<JobClocks> clocks;
  std::optional<JobSpans> spans;
  std::optional<DependencyGraph> graph;
  ScanStats read;  // what the load read from the store
  // The step breakdown, computed once (a kept analysis answers it again).
  mutable absl::Mutex steps_mu;
  mutable std::optional<v1::StepsReply> steps ABSL_GUARDED_BY(steps_mu);

  v1::StepsReply Steps() const {
    absl::MutexLock lock(&steps_mu);
    if (!steps) steps = StepBreakdown(*graph);
    return *steps;
  }
};

// RESOURCE_EXHAUSTED, with the way out, if analysing `job` whole at
// `bytes_per_span` would take more than `budget` (a replay's way out is a
// range of steps, which it reads alone).
absl::Status CheckBudget(const JobInfo& job, uint64_t budget,
                         uint64_t bytes_per_span);

// Hands a solution that `clocks` computed for the whole job to `save`.
void SaveNewClocks(const SaveClocks& save, const JobInfo& job,
                   const JobClocks& clocks);

// The whole job's clocks: its stored solution if that is of the job as it
// is now, else solved again (JobClocks::Update: from the chunks written
// since `state` if it holds, else from all of them); with `resolve`, solved
// from all its spans. The new solution handed to `save`.
// `cancel`: as JobRead::cancel.
// `state`, if set, is the job's incremental state (clock_solve_state.h);
// `log`, if set with it, the collector's evidence log (evidence_log.h).
absl::StatusOr<JobClocks> WholeJobClocks(
    const JobQuery& query, bool resolve, const SaveClocks& save,
    const std::atomic<bool>* cancel = nullptr, ClockSolveState* state = nullptr,
    const std::optional<StoredJobResult>* stored = nullptr,
    EvidenceLog* log = nullptr);

// The job's step summaries brought up to date (StepSummaries::Update), what
// was made handed to `save`. NOT_FOUND if the job has no steps.
absl::StatusOr<StepSummaries::Made> UpdateSummaries(
    const JobQuery& query, uint64_t budget, const SaveSummaries& save,
    const std::atomic<bool>* cancel = nullptr);

// The whole job's critical path walked a block of steps at a time
// (StreamedCriticalPath), for a job too large to load whole: its clocks
// brought up to date first (and handed to `save`), so that every block is
// placed by them. NOT_FOUND if the job has no steps; RESOURCE_EXHAUSTED,
// with a message naming the limit, if one step is over `budget`.
absl::StatusOr<v1::CriticalPathReply> StreamedPathOf(
    const JobQuery& query, uint64_t budget, const SaveClocks& save,
    std::optional<JobClocks>* clocks_out = nullptr);

// What a walk a block of steps at a time holds (StreamedPathOf, the
// streamed replay, StepSummaries::Update): the job's clocks solved first,
// then a block and the scan.
uint64_t StreamedBytes(const JobCatalog& catalog, uint64_t budget,
                       uint64_t bytes_per_span);

// The name of what a query of `kind` on `job` reserves memory for.
std::string Reserving(const char* kind, const JobInfo& job);

// One step as a range of steps (nullopt: the whole job).
std::optional<StepRange> StepsOf(std::optional<int64_t> step);

// Loads the job of an open query: one scan of the store; or with `steps`,
// only what those steps need (JobSpans::LoadSteps), refused by name
// (RESOURCE_EXHAUSTED) once its read holds more than `budget` allows. A
// whole job over `budget` is refused before anything is read. `solution`,
// if given, is the job's clock solution to place by instead of the stored
// one (one just brought up to date, not yet stored).
// What it holds is reserved of `memory` first (WholeBytes, or StepsBytes
// of the steps), `also_bytes` more for what the caller does with it (an
// export's scan), and held by the analysis.
absl::StatusOr<std::unique_ptr<JobAnalysis>> LoadAnalysis(
    AnalysisMemory& memory, JobQuery query,
    std::optional<StepRange> steps = std::nullopt,
    uint64_t bytes_per_span = kAnalysisBytesPerSpan,
    const SaveClocks& save = nullptr,
    const std::optional<StoredJobResult>* solution = nullptr,
    uint64_t also_bytes = 0);

absl::StatusOr<std::unique_ptr<JobAnalysis>> LoadAnalysis(
    AnalysisMemory& memory, const std::string& db_path, const std::string& job,
    std::optional<StepRange> steps = std::nullopt,
    uint64_t bytes_per_span = kAnalysisBytesPerSpan);

// The path over one step (NOT_FOUND naming it if no span has it), or over
// the whole job.
absl::StatusOr<v1::CriticalPathReply> PathOf(const JobAnalysis& analysis,
                                             std::optional<int64_t> step);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_JOB_ANALYSIS_H_
