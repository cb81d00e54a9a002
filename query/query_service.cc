#include "query/query_service.h"

#include <memory>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "query/analysis/comm_matrix.h"
#include "query/analysis/critical_path.h"
#include "query/analysis/op_compare.h"
#include "query/analysis/stats.h"
#include "query/analysis/stragglers.h"
#include "query/clocks/job_clocks.h"
#include "query/clocks/shown_window.h"
#include "query/job_analysis.h"
#include "query/job_query.h"
#include "query/ops/span_selection.h"
#include "query/query_costs.h"
#include "store/store.h"

namespace meridian {
namespace {

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

grpc::Status QueryService::ListJobs(grpc::ServerContext* context,
                                    const v1::ListJobsRequest* request,
                                    v1::ListJobsReply* reply) {
  // "" asks whether the caller may read any job at all.
  if (grpc::Status may = MayReadJob(context, request->job()); !may.ok()) {
    return may;
  }
  auto store = Store::Open(db_path_, QueryStoreOptions());
  if (!store.ok()) return ToGrpc(store.status());
  if (!request->job().empty()) {
    grpc::Status described = DescribeJob(**store, request->job(), reply);
    if (described.ok()) AddHealth(reply);
    return described;
  }
  auto jobs = (*store)->ListJobs();
  if (!jobs.ok()) return ToGrpc(jobs.status());
  for (const JobInfo& job : *jobs) {
    // Only the jobs the caller may read are listed, or even named.
    if (!MayReadJob(context, job.name).ok()) continue;
    Summarize(job, reply->add_jobs());
  }
  AddHealth(reply);
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
  auto clocks = WholeJobClocks(query, false, save_clocks_, cancel,
                               slot->too_large ? nullptr : &slot->state, stored,
                               evidence_log_);
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

}  // namespace meridian
