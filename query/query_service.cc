#include "query/query_service.h"

#include <memory>
#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/memory.h"
#include "query/analysis/comm_matrix.h"
#include "query/analysis/critical_path.h"
#include "query/analysis/dependency_graph.h"
#include "query/analysis/job_spans.h"
#include "query/analysis/op_compare.h"
#include "query/analysis/replay.h"
#include "query/analysis/replay_report.h"
#include "query/analysis/stats.h"
#include "query/analysis/step_breakdown.h"
#include "query/analysis/step_summaries.h"
#include "query/analysis/stragglers.h"
#include "query/analysis/streamed_path.h"
#include "query/analysis/streamed_replay.h"
#include "query/clocks/job_clocks.h"
#include "query/clocks/shown_window.h"
#include "query/export/chrome_trace.h"
#include "query/export/graph_writer.h"
#include "query/export/kineto_trace.h"
#include "query/export/perfetto_trace.h"
#include "query/export/replay_trace.h"
#include "query/ops/span_selection.h"
#include "query/query_costs.h"
#include "store/store.h"

namespace meridian {
namespace {

// A query's reading of the store, whose errors go to the client: they name
// it without its path (StoreOptions::name_in_errors).
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

void Summarize(const JobInfo& job, v1::JobSummary* out) {
  out->set_job(job.name);
  out->set_ranks(job.ranks);
  out->set_world_size(job.world_size);
  out->set_incomplete(job.world_size > 0 && job.ranks < job.world_size);
  out->set_nodes(job.nodes);
  out->set_spans(job.spans);
  out->set_start_ns(job.spans > 0 ? job.min_start_ns : 0);
  out->set_end_ns(job.spans > 0 ? job.max_end_ns : 0);
  out->set_stored_bytes(job.bytes);
  out->set_spans_dropped(job.spans_dropped);
}

// One job with its ranks and steps: what `meridian export --per-rank` and
// `--split-by` cut by.
grpc::Status DescribeJob(Store& store, const std::string& job,
                         v1::ListJobsReply* reply) {
  if (absl::Status s = store.BeginSnapshot(); !s.ok()) return ToGrpc(s);
  auto catalog = store.LoadCatalog(job);
  if (!catalog.ok()) return ToGrpc(catalog.status());
  v1::JobSummary* out = reply->add_jobs();
  Summarize(catalog->job, out);
  std::set<int32_t> ranks;
  for (const ProcessInfo& p : catalog->processes) {
    if (p.rank >= 0) ranks.insert(p.rank);
  }
  for (int32_t rank : ranks) out->add_rank_ids(rank);
  auto steps = store.StepRange(catalog->job.id);
  if (!steps.ok()) return ToGrpc(steps.status());
  if (steps->has_value()) {
    out->set_first_step((*steps)->first);
    out->set_last_step((*steps)->second);
  }
  return grpc::Status::OK;
}

}  // namespace

// A read connection, the job's catalog and the filter's selection.
struct JobQuery {
  std::unique_ptr<Store> store;
  JobCatalog catalog;
  std::optional<SpanSelection> selection;
};

namespace {

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

// All of job `job`: OpenJob with a filter naming the job only.
absl::StatusOr<JobQuery> OpenJob(const std::string& db_path,
                                 const std::string& job) {
  v1::SpanFilter filter;
  filter.set_job(job);
  return OpenJob(db_path, filter);
}

}  // namespace

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

namespace {

// RESOURCE_EXHAUSTED, with the way out, if analysing `job` whole at
// `bytes_per_span` would take more than `budget` (a replay's way out is a
// range of steps, which it reads alone).
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

// The job's stored clock solution; nullopt if there is none or it cannot be
// read (that only costs a solve).
std::optional<StoredJobResult> StoredClocks(Store& store, const JobInfo& job) {
  auto stored = store.LoadClockSolution(job.id);
  return stored.ok() ? *stored : std::nullopt;
}

// The whole job's solution `clocks` hold: the one it computed, else the
// stored one it took.
std::optional<StoredJobResult> SolutionOf(const JobQuery& query,
                                          const JobClocks& clocks) {
  return clocks.new_solution() ? clocks.new_solution()
                               : StoredClocks(*query.store, query.catalog.job);
}

// Whether `stored` (a clock solution or a summary state) is of `job` as it
// is now: its spans and last write.
bool IsOf(const StoredJobResult& stored, const JobInfo& job) {
  return stored.spans == job.spans && stored.written_ns == job.written_ns;
}

// Whether the job's step summaries are of it as it is now (an error reads
// as not: the update says what it is).
bool SummariesCurrent(Store& store, const JobInfo& job) {
  auto state = store.LoadSummaryState(job.id);
  return state.ok() && state->has_value() && IsOf(**state, job);
}

// Hands a solution that `clocks` computed for the whole job to `save`.
void SaveNewClocks(const QueryService::SaveClocks& save, const JobInfo& job,
                   const JobClocks& clocks) {
  if (save && clocks.new_solution()) {
    save(job.id, *clocks.new_solution());
  }
}

// The whole job's clocks: its stored solution if that is of the job as it
// is now, else solved again (JobClocks::Update: from the chunks written
// since `state` if it holds, else from all of them); with `resolve`, solved
// from all its spans. The new solution handed to `save`.
// `cancel`: as JobRead::cancel.
// `state`, if set, is the job's incremental state (clock_solve_state.h).
absl::StatusOr<JobClocks> WholeJobClocks(
    const JobQuery& query, bool resolve, const QueryService::SaveClocks& save,
    const std::atomic<bool>* cancel = nullptr, ClockSolveState* state = nullptr,
    const std::optional<StoredJobResult>* stored = nullptr) {
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
                               nullptr, state);
  }
  if (!clocks.ok()) return clocks.status();
  SaveNewClocks(save, query.catalog.job, *clocks);
  return clocks;
}

// The job's step summaries brought up to date (StepSummaries::Update), what
// was made handed to `save`. NOT_FOUND if the job has no steps.
absl::StatusOr<StepSummaries::Made> UpdateSummaries(
    const JobQuery& query, uint64_t budget,
    const QueryService::SaveSummaries& save,
    const std::atomic<bool>* cancel = nullptr) {
  auto made =
      StepSummaries::Update(*query.store, query.catalog, budget, cancel);
  if (!made.ok()) return made.status();
  if (!made->current && save) {
    save(query.catalog.job.id, made->steps, made->state);
  }
  return made;
}

// The whole job's critical path walked a block of steps at a time
// (StreamedCriticalPath), for a job too large to load whole: its clocks
// brought up to date first (and handed to `save`), so that every block is
// placed by them. NOT_FOUND if the job has no steps; RESOURCE_EXHAUSTED,
// with a message naming the limit, if one step is over `budget`.
absl::StatusOr<v1::CriticalPathReply> StreamedPathOf(
    const JobQuery& query, uint64_t budget,
    const QueryService::SaveClocks& save,
    std::optional<JobClocks>* clocks_out = nullptr) {
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

// What a walk a block of steps at a time holds (StreamedPathOf, the
// streamed replay, StepSummaries::Update): the job's clocks solved first,
// then a block and the scan.
uint64_t StreamedBytes(const JobCatalog& catalog, uint64_t budget,
                       uint64_t bytes_per_span) {
  return std::max(
      SolveBytes(catalog),
      BlockBytes(catalog,
                 std::min<int64_t>(kBlockSpans, budget / bytes_per_span),
                 bytes_per_span));
}

// The name of what a query of `kind` on `job` reserves memory for.
std::string Reserving(const char* kind, const JobInfo& job) {
  return absl::StrCat(kind, " of job ", job.name);
}

// One step as a range of steps (nullopt: the whole job).
std::optional<StepRange> StepsOf(std::optional<int64_t> step) {
  if (!step) return std::nullopt;
  return StepRange{*step, *step};
}

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
    const QueryService::SaveClocks& save = nullptr,
    const std::optional<StoredJobResult>* solution = nullptr,
    uint64_t also_bytes = 0) {
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
    std::optional<StepRange> steps = std::nullopt,
    uint64_t bytes_per_span = kAnalysisBytesPerSpan) {
  auto query = OpenJob(db_path, job);
  if (!query.ok()) return query.status();
  return LoadAnalysis(memory, std::move(*query), steps, bytes_per_span);
}

}  // namespace

QueryService::QueryService(std::string db_path, MayRead may_read,
                           uint64_t analysis_budget,
                           absl::Duration analysis_wait)
    : memory_(std::make_unique<AnalysisMemory>(analysis_budget, analysis_wait)),
      db_path_(std::move(db_path)),
      may_read_(std::move(may_read)),
      analysis_budget_(analysis_budget) {
  memory_->set_reclaim([this] { Reclaim(); });
}

void QueryService::Reclaim() {
  std::shared_ptr<const JobAnalysis> let_go;
  {
    absl::MutexLock lock(&cache_mu_);
    if (cache_ && cache_.use_count() == 1) {
      let_go = std::move(cache_);
      cache_key_.reset();
    }
  }
  let_go.reset();  // freed out of the lock
  std::vector<std::shared_ptr<ClockStateSlot>> dropped;  // likewise
  absl::MutexLock lock(&clock_states_mu_);
  ForgetClockStatesLocked(/*all=*/true, &dropped);
}

std::shared_ptr<const JobAnalysis> QueryService::KeptJob(const JobInfo& job) {
  const CacheKey key{job.name, job.id, job.spans, job.chunks, job.max_end_ns};
  absl::MutexLock lock(&cache_mu_);
  if (!cache_ || !cache_key_ || !(*cache_key_ == key)) return nullptr;
  cache_used_ = absl::Now();
  return cache_;
}

absl::StatusOr<std::shared_ptr<const JobAnalysis>> QueryService::WholeJob(
    const std::string& job, uint64_t bytes_per_span) {
  auto query = OpenJob(db_path_, job);
  if (!query.ok()) return query.status();
  return WholeJob(std::move(*query), bytes_per_span);
}

absl::StatusOr<std::shared_ptr<const JobAnalysis>> QueryService::WholeJob(
    JobQuery query, uint64_t bytes_per_span) {
  const std::string job = query.catalog.job.name;
  const JobInfo& info = query.catalog.job;
  const CacheKey key{job, info.id, info.spans, info.chunks, info.max_end_ns};
  // Checked here too: a kept analysis must not bypass the budget.
  absl::Status within = CheckBudget(info, analysis_budget_, bytes_per_span);
  if (!within.ok()) return within;
  // Whether this request loads the job for the cache (else another job is
  // loading: this one loads without keeping it).
  bool loads = false;
  // The analysis this request lets go of, freed out of the lock (freeing
  // returns its memory to the system: common/memory.h).
  std::shared_ptr<const JobAnalysis> let_go;
  {
    absl::MutexLock lock(&cache_mu_);
    if (cache_ && absl::Now() - cache_used_ > kCacheIdle) {
      let_go = std::move(cache_);
      cache_key_.reset();
    }
    while (cache_loading_ && cache_key_ && *cache_key_ == key) {
      cache_loaded_.Wait(&cache_mu_);
    }
    if (cache_ && cache_key_ && *cache_key_ == key) {
      cache_used_ = absl::Now();
      return cache_;
    }
    if (!cache_loading_) {
      // The last job's analysis is let go now, not after this load.
      if (cache_) let_go = std::move(cache_);
      cache_key_ = key;
      cache_loading_ = true;
      loads = true;
    }
  }
  let_go.reset();
  auto loaded = LoadAnalysis(*memory_, std::move(query), std::nullopt,
                             bytes_per_span, save_clocks_);
  std::shared_ptr<const JobAnalysis> analysis;
  if (loaded.ok()) {
    (*loaded)->query.store.reset();  // no read transaction held open
    analysis = std::move(*loaded);
  }
  if (loads) {
    absl::MutexLock lock(&cache_mu_);
    cache_loading_ = false;
    cache_ = analysis;  // none after a failure: the next request retries
    if (!analysis) cache_key_.reset();
    cache_used_ = absl::Now();
    cache_loaded_.SignalAll();
  }
  if (!loaded.ok()) return loaded.status();
  return analysis;
}

namespace {

// The path over one step (NOT_FOUND naming it if no span has it), or over
// the whole job.
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

// Sends `data` as chunks of at most 64 KiB, whatever size a writer hands
// over at once (a trace's metadata for 16,384 ranks is megabytes, beyond
// gRPC's 4 MiB message limit); false if the client stopped reading.
bool SendChunks(grpc::ServerContext* context, absl::string_view data,
                grpc::ServerWriter<v1::TraceChunk>* writer) {
  constexpr size_t kChunk = 64 * 1024;
  v1::TraceChunk chunk;
  for (size_t at = 0; at < data.size(); at += kChunk) {
    const absl::string_view piece = data.substr(at, kChunk);
    chunk.set_data(piece.data(), piece.size());
    if (context->IsCancelled() || !writer->Write(chunk)) return false;
  }
  return true;
}

// Writes `data` as a stream of chunks of at most 64 KiB.
grpc::Status WriteChunks(grpc::ServerContext* context, const std::string& data,
                         grpc::ServerWriter<v1::TraceChunk>* writer) {
  if (!SendChunks(context, data, writer)) {
    return grpc::Status(grpc::StatusCode::CANCELLED,
                        "the client stopped reading");
  }
  return grpc::Status::OK;
}

// A replay's request as changes and a window; INVALID_ARGUMENT saying what
// is wrong.
absl::Status ReadReplayRequest(const v1::ReplayRequest& request,
                               ReplayChanges* changes,
                               std::optional<StepRange>* steps) {
  if (request.job().empty()) {
    return absl::InvalidArgumentError(
        "no job given; `meridian jobs` lists the jobs");
  }
  if (request.has_first_step() != request.has_last_step()) {
    return absl::InvalidArgumentError(
        "give both first_step and last_step (--steps A:B), or neither");
  }
  if (request.has_first_step()) {
    if (request.first_step() > request.last_step()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--steps ", request.first_step(), ":", request.last_step(),
          ": the first step is after the last"));
    }
    *steps = StepRange{request.first_step(), request.last_step()};
  }
  for (const v1::ReplayScale& scale : request.scales()) {
    changes->scales.push_back({scale.pattern(), scale.factor()});
  }
  for (const v1::RankLike& like : request.rank_like()) {
    changes->rank_like.emplace_back(like.rank(), like.like());
  }
  if (request.has_comm_model()) {
    const v1::ReplayCommModel& m = request.comm_model();
    if (m.algorithm() != v1::COMM_ALGORITHM_RING &&
        m.algorithm() != v1::COMM_ALGORITHM_TREE) {
      return absl::InvalidArgumentError("--comm-model must be ring or tree");
    }
    changes->comm_model = CommModel{m.algorithm() == v1::COMM_ALGORITHM_RING
                                        ? CommModel::Algorithm::kRing
                                        : CommModel::Algorithm::kTree,
                                    m.bandwidth_bytes_per_s(), m.latency_ns()};
  }
  changes->no_wait = request.no_wait();
  return CheckChanges(*changes);
}

// A job loaded and replayed: what Replay and ExportReplayTrace answer from.
struct ReplayRun {
  std::shared_ptr<const JobAnalysis> analysis;
  std::optional<StepRange> steps;
  ReplayTimes times;
};

// `whole` loads the whole job (QueryService::WholeJob).
absl::StatusOr<ReplayRun> RunReplay(
    AnalysisMemory& memory, const std::string& db_path,
    const v1::ReplayRequest& request,
    const std::function<absl::StatusOr<std::shared_ptr<const JobAnalysis>>()>&
        whole) {
  ReplayRun run;
  ReplayChanges changes;
  if (absl::Status s = ReadReplayRequest(request, &changes, &run.steps);
      !s.ok()) {
    return s;
  }
  // One step is read alone, as critical-path --step reads it; a range of
  // steps is replayed within the whole job when that fits the budget, else
  // read alone too.
  const bool one_step = run.steps && run.steps->first == run.steps->last;
  absl::StatusOr<std::shared_ptr<const JobAnalysis>> analysis =
      absl::InternalError("not loaded");
  if (!one_step) analysis = whole();
  // (Not when there is only no room now: that is the answer.)
  if (run.steps && (one_step || (absl::IsResourceExhausted(analysis.status()) &&
                                 !AnalysisMemory::IsBusy(analysis.status())))) {
    analysis = LoadAnalysis(memory, db_path, request.job(), run.steps,
                            kReplayBytesPerSpan);
  }
  if (!analysis.ok()) return analysis.status();
  run.analysis = std::move(*analysis);
  auto times = Replay(*run.analysis->graph, changes);
  if (!times.ok()) return times.status();
  run.times = std::move(*times);
  return run;
}

}  // namespace

grpc::Status QueryService::ListJobs(grpc::ServerContext* context,
                                    const v1::ListJobsRequest* request,
                                    v1::ListJobsReply* reply) {
  // "" asks whether the caller may read any job at all.
  if (grpc::Status may = MayReadJob(context, request->job()); !may.ok()) {
    return may;
  }
  auto store = Store::Open(db_path_, QueryStoreOptions());
  if (!store.ok()) return ToGrpc(store.status());
  if (!request->job().empty())
    return DescribeJob(**store, request->job(), reply);
  auto jobs = (*store)->ListJobs();
  if (!jobs.ok()) return ToGrpc(jobs.status());
  for (const JobInfo& job : *jobs) {
    // Only the jobs the caller may read are listed, or even named.
    if (!MayReadJob(context, job.name).ok()) continue;
    Summarize(job, reply->add_jobs());
  }
  return grpc::Status::OK;
}

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
  std::unique_ptr<TraceWriter> writer_of_format;
  switch (request->format()) {
    case v1::EXPORT_FORMAT_PERFETTO:
      writer_of_format = std::make_unique<PerfettoTraceWriter>(
          query->catalog, *query->selection, sink);
      break;
    case v1::EXPORT_FORMAT_KINETO: {
      absl::Status one_rank =
          KinetoTraceWriter::CheckSelection(query->catalog, *query->selection);
      if (!one_rank.ok()) return ToGrpc(one_rank);
      writer_of_format = std::make_unique<KinetoTraceWriter>(
          query->catalog, *query->selection, sink);
      break;
    }
    default:
      writer_of_format = std::make_unique<ChromeTraceWriter>(
          query->catalog, *query->selection, sink);
  }
  TraceWriter& trace = *writer_of_format;
  // A time window can cut two ranks' messages at different points.
  const v1::SpanFilter& filter = request->filter();
  trace.set_message_flows(!filter.has_from_ns() && !filter.has_to_ns());
  if (clocks) trace.set_origin_ns(clocks->epoch_ns());
  trace.Begin();
  if (path) trace.AddCriticalPath(*path);
  // A time window is cut on the timeline the trace shows: with the clocks,
  // on the corrected one (ShownWindow); raw, on the raw times, from the
  // job's first stored start (the raw trace's origin).
  ScanRange range = ScanRangeOf(filter, *query->selection);
  std::optional<ShownWindow> window;
  if (clocks) {
    window.emplace(filter, query->catalog, *clocks);
    range = window->Widen(std::move(range));
  }
  absl::Status status = query->store->Scan(
      query->catalog.job, range, [&](const StoredSpan& span) {
        if (!query->selection->Selects(span)) return true;
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

grpc::Status QueryService::GetClocks(grpc::ServerContext* context,
                                     const v1::ClocksRequest* request,
                                     v1::ClocksReply* reply) {
  if (grpc::Status may = MayReadJob(context, request->job()); !may.ok())
    return may;
  // --resolve replaces the stored solution: that is a write.
  if (request->resolve()) {
    if (grpc::Status may = MayWriteJob(context, request->job()); !may.ok()) {
      return grpc::Status(
          may.error_code(),
          absl::StrCat(may.error_message(),
                       ": clocks --resolve stores a new solution (without "
                       "--resolve, the stored one is read)"));
    }
  }
  auto query = OpenJob(db_path_, request->job());
  if (!query.ok()) return ToGrpc(query.status());
  // A kept analysis of the job as it is has these very clocks.
  std::shared_ptr<const JobAnalysis> kept;
  if (!request->resolve() && (kept = KeptJob(query->catalog.job))) {
    *reply = kept->clocks->Report();
    return grpc::Status::OK;
  }
  // --resolve: solved from the spans again, and stored.
  auto lease = memory_->Reserve(SolveBytes(query->catalog),
                                Reserving("the clocks", query->catalog.job));
  if (!lease.ok()) return ToGrpc(lease.status());
  auto clocks = JobClocksOf(*query, request->resolve());
  if (!clocks.ok()) return ToGrpc(clocks.status());
  *reply = clocks->Report();
  return grpc::Status::OK;
}

grpc::Status QueryService::GetStats(grpc::ServerContext* context,
                                    const v1::StatsRequest* request,
                                    v1::StatsReply* reply) {
  if (grpc::Status may = MayReadJob(context, request->filter().job());
      !may.ok())
    return may;
  auto query = OpenJob(db_path_, request->filter());
  if (!query.ok()) return ToGrpc(query.status());
  StatsOptions options;
  options.per_rank = request->per_rank();
  options.by_callsite = request->by_callsite();
  options.mpitrace_bins = request->mpitrace_bins();
  StatsBuilder stats(query->catalog, *query->selection, options);
  std::optional<CommMatrixBuilder> matrix;
  if (request->matrix()) {
    matrix.emplace(query->catalog, *query->selection,
                   CommMatrixOptions{request->expand_collectives()});
  }
  // A time window is cut on the corrected timeline, as the export's
  // (ShownWindow): the job's clocks are needed only then.
  const v1::SpanFilter& f = request->filter();
  const bool windowed = f.has_from_ns() || f.has_to_ns();
  auto lease = memory_->Reserve(
      windowed ? SolveBytes(query->catalog) : ScanBytes(query->catalog),
      Reserving("statistics", query->catalog.job));
  if (!lease.ok()) return ToGrpc(lease.status());
  ScanRange range = ScanRangeOf(f, *query->selection);
  std::optional<JobClocks> clocks;
  std::optional<ShownWindow> window;
  if (windowed) {
    auto loaded = JobClocksOf(*query, false);
    if (!loaded.ok()) return ToGrpc(loaded.status());
    clocks.emplace(std::move(*loaded));
    window.emplace(f, query->catalog, *clocks);
    range = window->Widen(std::move(range));
  }
  absl::Status status = query->store->Scan(
      query->catalog.job, range, [&](const StoredSpan& span) {
        if (window && !window->Contains(clocks->Place(span))) return true;
        if (query->selection->Selects(span)) {
          stats.Add(span);
          if (matrix) matrix->Add(span);
        } else {
          stats.AddUnselected(span);  // its rank's rusage, MPI_Init...
        }
        return true;
      });
  if (!status.ok()) return ToGrpc(status);
  // Imported totals cover whole runs: not with a time or step range.
  if (!f.has_from_ns() && !f.has_to_ns() && !f.has_first_step() &&
      !f.has_last_step()) {
    auto totals = query->store->LoadTotals(query->catalog.job.id);
    if (!totals.ok()) return ToGrpc(totals.status());
    stats.AddTotals(*totals);
  }
  *reply = stats.Finish();
  if (matrix) matrix->Finish(reply->mutable_matrix());
  // What the ranks' probes dropped (full rings): not in the figures above.
  absl::flat_hash_map<int32_t, int64_t> dropped_by_rank;
  for (const ProcessInfo& p : query->catalog.processes) {
    if (p.dropped > 0 && query->selection->SelectsProcess(p.id)) {
      dropped_by_rank[p.rank] += p.dropped;
    }
  }
  for (v1::RankStats& r : *reply->mutable_ranks()) {
    auto it = dropped_by_rank.find(r.rank());
    if (it == dropped_by_rank.end()) continue;
    r.set_spans_dropped(it->second);
    reply->set_spans_dropped(reply->spans_dropped() + it->second);
  }
  return grpc::Status::OK;
}

grpc::Status QueryService::GetCriticalPath(
    grpc::ServerContext* context, const v1::CriticalPathRequest* request,
    v1::CriticalPathReply* reply) {
  if (grpc::Status may = MayReadJob(context, request->job()); !may.ok())
    return may;
  const std::optional<int64_t> step =
      request->has_step() ? std::optional<int64_t>(request->step())
                          : std::nullopt;
  absl::StatusOr<std::shared_ptr<const JobAnalysis>> analysis =
      step ? absl::StatusOr<std::shared_ptr<const JobAnalysis>>(LoadAnalysis(
                 *memory_, db_path_, request->job(), StepsOf(step)))
           : WholeJob(request->job(), kAnalysisBytesPerSpan);
  if (!step && absl::IsResourceExhausted(analysis.status()) &&
      !AnalysisMemory::IsBusy(analysis.status())) {
    // Too large to load whole: walked a block of steps at a time, unless
    // the job has no steps (then the refusal stands).
    auto query = OpenJob(db_path_, request->job());
    if (!query.ok()) return ToGrpc(query.status());
    auto lease = memory_->Reserve(
        StreamedBytes(query->catalog, analysis_budget_, kAnalysisBytesPerSpan),
        Reserving("a critical path", query->catalog.job));
    if (!lease.ok()) return ToGrpc(lease.status());
    auto streamed = StreamedPathOf(*query, analysis_budget_, save_clocks_);
    if (!absl::IsNotFound(streamed.status())) {
      if (!streamed.ok()) return ToGrpc(streamed.status());
      *reply = std::move(*streamed);
      ReturnFreedMemory();
      return grpc::Status::OK;
    }
  }
  if (!analysis.ok()) return ToGrpc(analysis.status());
  auto path = PathOf(**analysis, step);
  if (!path.ok()) return ToGrpc(path.status());
  *reply = std::move(*path);
  return grpc::Status::OK;
}

absl::Status QueryService::AnswerFromSummaries(JobQuery& query,
                                               const FromSummaries& answer) {
  // Summaries of the job as it is are read, not made: no spans loaded.
  AnalysisMemory::Lease lease;
  if (!SummariesCurrent(*query.store, query.catalog.job)) {
    auto reserved = memory_->Reserve(
        StreamedBytes(query.catalog, analysis_budget_, kAnalysisBytesPerSpan),
        Reserving("the step summaries", query.catalog.job));
    if (!reserved.ok()) return reserved.status();
    lease = std::move(*reserved);
  }
  auto made = UpdateSummaries(query, analysis_budget_, save_summaries_);
  if (!made.ok()) return made.status();
  return answer(*query.store, query.catalog, *made);
}

absl::StatusOr<JobClocks> QueryService::JobClocksOf(
    const JobQuery& query, bool resolve, const std::atomic<bool>* cancel,
    const std::optional<StoredJobResult>* stored) {
  if (resolve) return WholeJobClocks(query, true, save_clocks_, cancel);
  std::shared_ptr<ClockStateSlot> slot;
  // Slots let go, freed once no lock is held: a lease's end returns memory
  // to the system, which is slow (not while every query's clocks wait).
  std::vector<std::shared_ptr<ClockStateSlot>> dropped;
  std::optional<AnalysisMemory::Lease> old_lease;
  {
    absl::MutexLock lock(&clock_states_mu_);
    std::shared_ptr<ClockStateSlot>& kept = clock_states_[query.catalog.job.id];
    if (!kept) kept = std::make_shared<ClockStateSlot>();
    kept->used = absl::Now();
    slot = kept;
    ForgetClockStatesLocked(false, &dropped);
  }
  absl::MutexLock lock(&slot->mu);
  const int64_t incremental = slot->state.incremental_updates;
  auto clocks =
      WholeJobClocks(query, false, save_clocks_, cancel,
                     slot->too_large ? nullptr : &slot->state, stored);
  if (clocks.ok() && !clocks->from_stored()) {
    ++(slot->state.incremental_updates > incremental ? incremental_updates_
                                                     : whole_updates_);
  }
  // A state may take a quarter of the analysis budget; a job whose state
  // is larger is solved whole from its chunks each time.
  int64_t bytes = slot->state.MemoryBytes();
  if (!slot->too_large && static_cast<uint64_t>(bytes) > analysis_budget_ / 4) {
    slot->state.Clear();
    slot->too_large = true;
    bytes = slot->state.MemoryBytes();
  }
  absl::MutexLock states(&clock_states_mu_);
  // The state is kept only while the analysis budget has room for it.
  old_lease = std::move(slot->lease);
  slot->lease.reset();
  if (bytes > 0) {
    slot->lease = memory_->TryReserve(static_cast<uint64_t>(bytes));
    if (!slot->lease) {
      slot->state.Clear();
      bytes = slot->state.MemoryBytes();
    }
  }
  slot->bytes = bytes;
  ForgetClockStatesLocked(false, &dropped);
  return clocks;
}

void QueryService::ForgetClockStatesLocked(
    bool all, std::vector<std::shared_ptr<ClockStateSlot>>* dropped) {
  // The least recently used first, none in use (an update holds its slot):
  // while there are more than kClockStates, or they hold more than half
  // the analysis budget together; with `all`, every one not in use.
  while (true) {
    int64_t bytes = 0;
    auto oldest = clock_states_.end();
    for (auto it = clock_states_.begin(); it != clock_states_.end(); ++it) {
      bytes += it->second->bytes;
      if (it->second.use_count() == 1 &&
          (oldest == clock_states_.end() ||
           it->second->used < oldest->second->used)) {
        oldest = it;
      }
    }
    if (oldest == clock_states_.end() ||
        (!all && clock_states_.size() <= kClockStates &&
         static_cast<uint64_t>(bytes) <= analysis_budget_ / 2)) {
      return;
    }
    dropped->push_back(std::move(oldest->second));
    clock_states_.erase(oldest);
  }
}

absl::Status QueryService::Refresh(const std::string& job,
                                   const std::atomic<bool>* cancel) {
  auto query = OpenJob(db_path_, job);  // one read of the job for both
  if (!query.ok()) return query.status();
  // What both steps hold, reserved once (the larger), unless both are
  // current already (a read of each).
  AnalysisMemory::Lease lease;
  const JobInfo& info = query->catalog.job;
  const std::optional<StoredJobResult> clocks =
      StoredClocks(*query->store, info);
  if (!SummariesCurrent(*query->store, info) || !clocks ||
      !IsOf(*clocks, info)) {
    auto reserved = memory_->Reserve(
        StreamedBytes(query->catalog, analysis_budget_, kAnalysisBytesPerSpan),
        Reserving("the refresh", info));
    if (!reserved.ok()) return reserved.status();
    lease = std::move(*reserved);
  }
  auto made =
      UpdateSummaries(*query, analysis_budget_, save_summaries_, cancel);
  // NOT_FOUND: a job without steps has no summaries.
  if (!made.ok() && !absl::IsNotFound(made.status())) return made.status();
  // The solution read above, not read again.
  return JobClocksOf(*query, false, cancel, &clocks).status();
}

grpc::Status QueryService::GetStragglers(grpc::ServerContext* context,
                                         const v1::StragglersRequest* request,
                                         v1::StragglersReply* reply) {
  if (grpc::Status may = MayReadJob(context, request->job()); !may.ok())
    return may;
  if (request->head() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "head must be >= 0 (0 lists every instance)");
  }
  auto query =
      OpenJob(db_path_, request->job());  // one read of the job for both
  if (!query.ok()) return ToGrpc(query.status());
  absl::Status summarised =
      AnswerFromSummaries(*query, [&](Store& store, const JobCatalog& catalog,
                                      const StepSummaries::Made& made) {
        auto stragglers =
            StepSummaries::Stragglers(store, catalog, made, request->head());
        if (!stragglers.ok()) return stragglers.status();
        *reply = std::move(*stragglers);
        return absl::OkStatus();
      });
  if (!absl::IsNotFound(summarised)) {
    if (!summarised.ok()) return ToGrpc(summarised);
    reply->set_job(request->job());
    return grpc::Status::OK;
  }
  // No steps: the whole job, loaded.
  auto analysis = WholeJob(std::move(*query), kAnalysisBytesPerSpan);
  if (!analysis.ok()) return ToGrpc(analysis.status());
  *reply = Stragglers(*(*analysis)->graph, request->head());
  reply->set_job(request->job());
  return grpc::Status::OK;
}

grpc::Status QueryService::GetSteps(grpc::ServerContext* context,
                                    const v1::StepsRequest* request,
                                    v1::StepsReply* reply) {
  if (grpc::Status may = MayReadJob(context, request->job()); !may.ok())
    return may;
  const std::optional<int32_t> rank =
      request->has_rank() ? std::optional<int32_t>(request->rank())
                          : std::nullopt;
  auto query =
      OpenJob(db_path_, request->job());  // one read of the job for both
  if (!query.ok()) return ToGrpc(query.status());
  if (rank) {
    if (absl::Status known = CheckRanksInJob(query->catalog, {*rank});
        !known.ok()) {
      return ToGrpc(known);
    }
  }
  absl::Status summarised =
      AnswerFromSummaries(*query, [&](Store& store, const JobCatalog& catalog,
                                      const StepSummaries::Made& made) {
        auto steps = StepSummaries::Steps(store, catalog, made, rank,
                                          request->means_only());
        if (!steps.ok()) return steps.status();
        *reply = std::move(*steps);
        return absl::OkStatus();
      });
  if (!absl::IsNotFound(summarised)) {
    if (!summarised.ok()) return ToGrpc(summarised);
    reply->set_job(request->job());
    return grpc::Status::OK;
  }
  // No steps: the whole job, loaded (its breakdown has no step either).
  auto analysis = WholeJob(std::move(*query), kAnalysisBytesPerSpan);
  if (!analysis.ok()) return ToGrpc(analysis.status());
  *reply = (*analysis)->Steps();
  if (request->has_rank() || request->means_only()) {
    KeepRankSteps(request->has_rank() ? std::optional<int32_t>(request->rank())
                                      : std::nullopt,
                  reply);
  }
  reply->set_job(request->job());
  return grpc::Status::OK;
}

grpc::Status QueryService::Compare(grpc::ServerContext* context,
                                   const v1::CompareRequest* request,
                                   v1::CompareReply* reply) {
  for (const std::string& job : {request->job_a(), request->job_b()}) {
    if (job.empty()) continue;
    if (grpc::Status may = MayReadJob(context, job); !may.ok()) return may;
  }
  const bool two_jobs = !request->job_b().empty();
  if (request->head() < 0) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "head must be >= 0 (0 lists every operation)");
  }
  if (!two_jobs && request->ranks_size() != 2) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        "compare needs two jobs (--job A --job B) or two ranks of one job "
        "(--job A --ranks R1,R2)");
  }
  // Side i: a job, restricted to some ranks.
  struct Side {
    std::string job;
    std::vector<int32_t> ranks;
  };
  std::vector<Side> sides;
  if (two_jobs) {
    std::vector<int32_t> ranks(request->ranks().begin(),
                               request->ranks().end());
    sides = {{request->job_a(), ranks}, {request->job_b(), ranks}};
  } else {
    sides = {{request->job_a(), {request->ranks(0)}},
             {request->job_a(), {request->ranks(1)}}};
  }
  std::vector<std::unique_ptr<OpTotalsBuilder>> totals;
  if (!two_jobs) {
    // Two ranks of one job: one scan of their tracks.
    auto query = OpenJob(db_path_, request->job_a());
    if (!query.ok()) return ToGrpc(query.status());
    for (int i = 0; i < 2; ++i) {
      totals.push_back(std::make_unique<OpTotalsBuilder>(query->catalog));
    }
    auto lease =
        memory_->Reserve(ScanBytes(query->catalog),
                         Reserving("a comparison", query->catalog.job));
    if (!lease.ok()) return ToGrpc(lease.status());
    absl::Status status =
        AddRankTotals(*query->store, query->catalog, request->ranks(0),
                      request->ranks(1), totals[0].get(), totals[1].get());
    if (!status.ok()) return ToGrpc(status);
  }
  // Two jobs: a scan of each.
  for (size_t i = 0; two_jobs && i < sides.size(); ++i) {
    const Side& side = sides[i];
    v1::SpanFilter filter;
    filter.set_job(side.job);
    auto query = OpenJob(db_path_, filter);
    if (!query.ok()) return ToGrpc(query.status());
    *filter.mutable_ranks() = {side.ranks.begin(), side.ranks.end()};
    auto selection = SpanSelection::Make(query->catalog, filter);
    if (!selection.ok()) return ToGrpc(selection.status());
    totals.push_back(std::make_unique<OpTotalsBuilder>(query->catalog));
    OpTotalsBuilder& builder = *totals.back();
    auto lease =
        memory_->Reserve(ScanBytes(query->catalog),
                         Reserving("a comparison", query->catalog.job));
    if (!lease.ok()) return ToGrpc(lease.status());
    absl::Status status =
        query->store->Scan(query->catalog.job, ScanRangeOf(filter, *selection),
                           [&](const StoredSpan& span) {
                             if (selection->Selects(span)) builder.Add(span);
                             return true;
                           });
    if (!status.ok()) return ToGrpc(status);
  }
  auto compared =
      CompareOps(*totals[0], *totals[1], request->sort(), request->head());
  if (!compared.ok()) return ToGrpc(compared.status());
  *reply = std::move(*compared);
  for (int i = 0; i < 2; ++i) {
    std::string name = absl::StrCat("job ", sides[i].job);
    if (!sides[i].ranks.empty()) {
      absl::StrAppend(&name, sides[i].ranks.size() == 1 ? " rank " : " ranks ",
                      absl::StrJoin(sides[i].ranks, ","));
    }
    i == 0 ? reply->set_a(name) : reply->set_b(name);
  }
  return grpc::Status::OK;
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

grpc::Status QueryService::Replay(grpc::ServerContext* context,
                                  const v1::ReplayRequest* request,
                                  v1::ReplayReply* reply) {
  if (grpc::Status may = MayReadJob(context, request->job()); !may.ok())
    return may;
  auto run = RunReplay(*memory_, db_path_, *request, [&] {
    return WholeJob(request->job(), kReplayBytesPerSpan);
  });
  if (absl::IsResourceExhausted(run.status()) &&
      !AnalysisMemory::IsBusy(run.status()) && !request->has_first_step()) {
    // Too large to replay whole: a block of steps at a time, unless the job
    // has no steps (then the refusal stands).
    auto streamed = StreamedReplayOf(*request);
    if (!streamed.ok()) {
      return ToGrpc(absl::IsNotFound(streamed.status()) ? run.status()
                                                        : streamed.status());
    }
    *reply = std::move(*streamed);
    return grpc::Status::OK;
  }
  if (!run.ok()) return ToGrpc(run.status());
  auto report = ReplayReport(*run->analysis->graph, run->times, run->steps);
  if (!report.ok()) return ToGrpc(report.status());
  *reply = std::move(*report);
  reply->set_job(request->job());
  return grpc::Status::OK;
}

absl::StatusOr<v1::ReplayReply> QueryService::StreamedReplayOf(
    const v1::ReplayRequest& request) {
  ReplayChanges changes;
  std::optional<StepRange> steps;
  if (absl::Status s = ReadReplayRequest(request, &changes, &steps); !s.ok()) {
    return s;
  }
  auto query = OpenJob(db_path_, request.job());
  if (!query.ok()) return query.status();
  auto lease = memory_->Reserve(
      StreamedBytes(query->catalog, analysis_budget_, kReplayBytesPerSpan),
      Reserving("a replay", query->catalog.job));
  if (!lease.ok()) return lease.status();
  // Every block placed by the job's clocks, brought up to date first.
  auto clocks = JobClocksOf(*query, false);
  if (!clocks.ok()) return clocks.status();
  const std::optional<StoredJobResult> stored = SolutionOf(*query, *clocks);
  const auto max_spans =
      static_cast<int64_t>(analysis_budget_ / kReplayBytesPerSpan);
  auto reply =
      StreamedReplay(*query->store, query->catalog, stored, changes,
                     std::min<int64_t>(kBlockSpans, max_spans), max_spans);
  if (absl::IsResourceExhausted(reply.status())) {
    return absl::ResourceExhaustedError(
        absl::StrCat(reply.status().message(),
                     ": replaying it would take more than this collector's "
                     "--analysis-memory-mib ",
                     analysis_budget_ >> 20, "; raise the limit"));
  }
  if (!reply.ok()) return reply.status();
  reply->set_job(request.job());
  return reply;
}

grpc::Status QueryService::ExportReplayTrace(
    grpc::ServerContext* context, const v1::ReplayRequest* request,
    grpc::ServerWriter<v1::TraceChunk>* writer) {
  if (grpc::Status may = MayReadJob(context, request->job()); !may.ok())
    return may;
  auto run = RunReplay(*memory_, db_path_, *request, [&] {
    return WholeJob(request->job(), kReplayBytesPerSpan);
  });
  if (!run.ok()) return ToGrpc(run.status());
  const bool written = WriteReplayTrace(
      *run->analysis->spans, run->times, [&](absl::string_view data) {
        return SendChunks(context, data, writer);
      });
  if (!written) {
    return grpc::Status(grpc::StatusCode::CANCELLED,
                        "the client stopped reading");
  }
  return grpc::Status::OK;
}

}  // namespace meridian
