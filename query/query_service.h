// QueryService: meridian.v1.Query, served by the collector over its store.
//
// Each call opens its own read connection to the store, so queries run
// concurrently with ingest (SQLite WAL) and with each other, and see every
// batch committed before they started. The analyses (critical path,
// stragglers, steps, graph) hold the job's spans in memory while they run
// (JobSpans and the graph: about 150 bytes a span, docs/PERFORMANCE.md),
// and keep the last whole job loaded for the next query (WholeJob).
// Errors: NOT_FOUND for an unknown job, INVALID_ARGUMENT for a bad filter, each
// with a message saying what to fix.
//
// The handlers: query_service.cc (jobs, clocks, stats, critical paths,
// steps, stragglers, comparisons, the background refresh),
// query_service_export.cc (traces and graphs), query_service_replay.cc
// (replays), query_service_sql.cc (SQL). What they share: job_query.h (a
// job opened for a query), job_analysis.h (a job loaded for the analyses),
// trace_chunks.h (streamed answers).
#ifndef MERIDIAN_QUERY_QUERY_SERVICE_H_
#define MERIDIAN_QUERY_QUERY_SERVICE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "meridian/v1/query.grpc.pb.h"
#include "query/analysis/job_health.h"
#include "query/analysis/step_summaries.h"
#include "query/analysis_memory.h"
#include "query/clocks/clock_solve_state.h"
#include "query/clocks/evidence_log.h"
#include "query/clocks/job_clocks.h"
#include "query/job_analysis.h"
#include "query/job_query.h"
#include "store/store.h"

namespace meridian {

class QueryService final : public v1::Query::Service {
 public:
  // Whether the caller of `context` may read job `job` (for "": some job),
  // or with `write`, change what is stored of it: OK, or the status to
  // answer (the collector's Authorizer; everyone may, by default). ListJobs
  // lists only the jobs the caller may read; `clocks --resolve`, which
  // replaces the stored solution, needs write too.
  using MayRead = std::function<grpc::Status(
      const grpc::ServerContext& context, const std::string& job, bool write)>;

  // `analysis_budget`: bytes an analysis of a whole job may take (about
  // 190 a span); larger jobs are refused with a message (RESOURCE_EXHAUSTED).
  // It also bounds what all the queries running at once hold together:
  // each reserves its estimate (query_costs.h) before it reads, and waits
  // up to `analysis_wait` for room, else is refused (RESOURCE_EXHAUSTED,
  // saying to retry; analysis_memory.h). The kept whole-job analysis and
  // the jobs' clock states count too, and are let go for a query that
  // waits.
  explicit QueryService(std::string db_path, MayRead may_read = nullptr,
                        uint64_t analysis_budget = uint64_t{4} << 30,
                        absl::Duration analysis_wait = absl::Seconds(10));

  // What the queries hold of the analysis budget, and how many waited or
  // were refused (the collector's metrics).
  AnalysisMemory::Counters memory_counters() const {
    return memory_->counters();
  }

  // Stores a job's clock solution (the collector runs it on its writer, not
  // waiting): a query that solves a job's clocks whole hands the solution
  // here, and later queries of the job as it stands read it instead of
  // solving (docs/clocks.md). Unset: nothing is stored.
  using SaveClocks = meridian::SaveClocks;
  void set_save_clocks(SaveClocks save) { save_clocks_ = std::move(save); }
  // The evidence log of the collector's store (not owned; it outlives this
  // service): the jobs' clock updates take the evidence of the chunks
  // written since from it instead of reading them (evidence_log.h). Unset:
  // they read the chunks.
  void set_evidence_log(EvidenceLog* log) { evidence_log_ = log; }
  // The processes of a job on the collector's activity board (what each is
  // in, as its agent last reported): GetHealth's input (docs/health.md).
  // Unset: every job is answered from the store alone ("finished").
  // `jobs`: the jobs with a process on the board (ListJobs' health);
  // `slowdowns`: a job's slowdowns now (the collector's SlowdownWatch);
  // `stall_after_ns`: the threshold of a request that sets none (the
  // collector's --stall-after).
  struct LiveBoard {
    std::function<std::vector<LiveProcess>(const std::string&)> job;
    std::function<std::vector<std::string>()> jobs;
    std::function<std::vector<v1::HealthSlowdown>(const std::string&)>
        slowdowns;
    int64_t stall_after_ns = kDefaultStallAfterNs;
  };
  void set_live_board(LiveBoard live) { live_ = std::move(live); }
  // Stores step summaries (Store::SaveStepSummaries; the collector's writer
  // does, and returns once they are stored): whole-job steps and stragglers
  // of a job with steps are answered from its per-step summaries
  // (query/analysis/step_summaries.h), and a query that makes the ones
  // missing hands them here. Unset: nothing is stored (each query makes
  // what is missing again).
  using SaveSummaries = meridian::SaveSummaries;
  void set_save_summaries(SaveSummaries save) {
    save_summaries_ = std::move(save);
  }

  // Brings `job`'s stored results up to date with no client asking: its
  // step summaries (what is missing made and handed to save_summaries_)
  // and its clock solution (solved only if the stored one is not of the job
  // as it is now, from the chunks written since the job's kept state, else
  // from all its chunks: JobClocks::Update; handed to save_clocks_). The
  // collector's JobRefresher calls it as batches arrive, so that queries read
  // them. NOT_FOUND if the job does not exist; RESOURCE_EXHAUSTED as the
  // queries; CANCELLED once `cancel` (if set) is true while there is work left:
  // it stops before the next block of steps (a block is at most about 200,000
  // spans) or at the next span of the clock solve's scan. Summaries are
  // stored only once all the missing ones are made, so a stop in them
  // stores none; a stop in the clock solve keeps the summaries made
  // before it.
  absl::Status Refresh(const std::string& job,
                       const std::atomic<bool>* cancel = nullptr);

  grpc::Status ListJobs(grpc::ServerContext* context,
                        const v1::ListJobsRequest* request,
                        v1::ListJobsReply* reply) override;
  grpc::Status ExportTrace(grpc::ServerContext* context,
                           const v1::ExportRequest* request,
                           grpc::ServerWriter<v1::TraceChunk>* writer) override;
  grpc::Status GetStats(grpc::ServerContext* context,
                        const v1::StatsRequest* request,
                        v1::StatsReply* reply) override;
  grpc::Status GetClocks(grpc::ServerContext* context,
                         const v1::ClocksRequest* request,
                         v1::ClocksReply* reply) override;
  grpc::Status GetCriticalPath(grpc::ServerContext* context,
                               const v1::CriticalPathRequest* request,
                               v1::CriticalPathReply* reply) override;
  grpc::Status GetStragglers(grpc::ServerContext* context,
                             const v1::StragglersRequest* request,
                             v1::StragglersReply* reply) override;
  grpc::Status GetSteps(grpc::ServerContext* context,
                        const v1::StepsRequest* request,
                        v1::StepsReply* reply) override;
  grpc::Status Compare(grpc::ServerContext* context,
                       const v1::CompareRequest* request,
                       v1::CompareReply* reply) override;
  grpc::Status ExportGraph(grpc::ServerContext* context,
                           const v1::GraphRequest* request,
                           grpc::ServerWriter<v1::TraceChunk>* writer) override;
  grpc::Status GetHealth(grpc::ServerContext* context,
                         const v1::HealthRequest* request,
                         v1::HealthReply* reply) override;
  grpc::Status Replay(grpc::ServerContext* context,
                      const v1::ReplayRequest* request,
                      v1::ReplayReply* reply) override;
  grpc::Status ExportReplayTrace(
      grpc::ServerContext* context, const v1::ReplayRequest* request,
      grpc::ServerWriter<v1::TraceChunk>* writer) override;
  // query_service_sql.cc: one SQL statement (query/sql/sql_query.h).
  grpc::Status Sql(grpc::ServerContext* context, const v1::SqlRequest* request,
                   v1::SqlReply* reply) override;
  // query_service_waits.cc: wait states (query/analysis/wait_states.h).
  grpc::Status Waits(grpc::ServerContext* context,
                     const v1::WaitsRequest* request,
                     v1::WaitsReply* reply) override;

  // Clock solutions made since the service started: `incremental` by an
  // update from a job's kept state, `whole` from all its chunks (the first
  // of a job, or when the state no longer held or was not kept).
  struct ClockUpdates {
    int64_t incremental = 0;
    int64_t whole = 0;
  };
  ClockUpdates clock_updates() const {
    return {incremental_updates_.load(), whole_updates_.load()};
  }

 private:
  // Sets each listed job's health where a process of it reports.
  void AddHealth(v1::ListJobsReply* reply) const;
  grpc::Status MayReadJob(const grpc::ServerContext* context,
                          const std::string& job) const {
    return may_read_ ? may_read_(*context, job, false) : grpc::Status::OK;
  }
  grpc::Status MayWriteJob(const grpc::ServerContext* context,
                           const std::string& job) const {
    return may_read_ ? may_read_(*context, job, true) : grpc::Status::OK;
  }

  // The whole job loaded for the analyses, `bytes_per_span` counted
  // against the budget: the last one loaded is kept (its read connection
  // closed) and answers the next whole-job analysis of the same job while
  // the job has not changed (same spans, chunks and last end), so the web
  // page's steps, stragglers and path load a large job once. A request
  // arriving while that job loads waits for it rather than loading it
  // again. Held until another job is analysed whole, or for at most
  // kCacheIdle after its last use (dropped at the next query).
  absl::StatusOr<std::shared_ptr<const JobAnalysis>> WholeJob(
      const std::string& job, uint64_t bytes_per_span);
  // The same for a job already opened (its catalog read once).
  absl::StatusOr<std::shared_ptr<const JobAnalysis>> WholeJob(
      JobQuery query, uint64_t bytes_per_span);
  static constexpr absl::Duration kCacheIdle = absl::Minutes(5);
  // The kept analysis if it is of `job` as it is now, else nullptr (loads
  // nothing).
  std::shared_ptr<const JobAnalysis> KeptJob(const JobInfo& job);

  // A whole job's replay a block of steps at a time (streamed_replay.h),
  // for a job over the analysis budget: its clocks brought up to date
  // first.
  absl::StatusOr<v1::ReplayReply> StreamedReplayOf(
      const v1::ReplayRequest& request);

  // Runs `answer` over the step summaries of the opened job, brought up to
  // date (and what was made handed to save_summaries_). NOT_FOUND if the
  // job has no steps: the caller analyses it whole (WholeJob of the same
  // query: the job is opened once).
  using FromSummaries =
      std::function<absl::Status(Store& store, const JobCatalog& catalog,
                                 const StepSummaries::Made& made)>;
  absl::Status AnswerFromSummaries(JobQuery& query,
                                   const FromSummaries& answer);

  // The job's clocks brought up to date (from the stored solution, else by
  // JobClocks::Update with the job's kept ClockSolveState, so that an
  // update places and matches only the evidence still open; with
  // `resolve`, solved from all its spans), the new solution handed to
  // save_clocks_. States are kept for the jobs updated last (see
  // ForgetClockStatesLocked), each updated by one caller at a time.
  // `stored`, if set, is the job's stored solution, read already.
  absl::StatusOr<JobClocks> JobClocksOf(
      const JobQuery& query, bool resolve,
      const std::atomic<bool>* cancel = nullptr,
      const std::optional<StoredJobResult>* stored = nullptr);
  struct ClockStateSlot {
    absl::Mutex mu;
    ClockSolveState state ABSL_GUARDED_BY(mu);
    bool too_large ABSL_GUARDED_BY(mu) = false;
    absl::Time used;    // under clock_states_mu_
    int64_t bytes = 0;  // the state's, after its last update; likewise
    // The state's bytes of the analysis budget; likewise. Destroyed with
    // the slot, before memory_.
    std::optional<AnalysisMemory::Lease> lease;
  };
  static constexpr size_t kClockStates = 16;
  std::atomic<int64_t> incremental_updates_{0};
  std::atomic<int64_t> whole_updates_{0};
  // Drops the least recently used states not in use while more than
  // kClockStates are kept or they hold more than half the analysis budget;
  // with `all`, every state not in use. The slots let go are moved to
  // `dropped`, for the caller to free once the lock is released.
  void ForgetClockStatesLocked(
      bool all, std::vector<std::shared_ptr<ClockStateSlot>>* dropped)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(clock_states_mu_);
  // Lets go of what is only kept for later queries (the kept analysis if
  // nobody uses it, the clock states not in use): for a query waiting for
  // memory.
  void Reclaim();
  // All the queries' memory, the analysis budget. First of the members, so
  // that it outlives every lease the others hold.
  std::unique_ptr<AnalysisMemory> memory_;
  absl::Mutex clock_states_mu_;
  absl::flat_hash_map<int64_t, std::shared_ptr<ClockStateSlot>> clock_states_
      ABSL_GUARDED_BY(clock_states_mu_);

  std::string db_path_;
  SaveClocks save_clocks_;
  EvidenceLog* evidence_log_ = nullptr;
  LiveBoard live_;
  SaveSummaries save_summaries_;
  MayRead may_read_;
  uint64_t analysis_budget_;
  struct CacheKey {
    std::string job;
    int64_t id = 0, spans = 0, chunks = 0, end_ns = 0;
    bool operator==(const CacheKey& o) const {
      return job == o.job && id == o.id && spans == o.spans &&
             chunks == o.chunks && end_ns == o.end_ns;
    }
  };
  absl::Mutex cache_mu_;
  absl::CondVar cache_loaded_;
  std::optional<CacheKey> cache_key_ ABSL_GUARDED_BY(cache_mu_);
  std::shared_ptr<const JobAnalysis> cache_ ABSL_GUARDED_BY(cache_mu_);
  bool cache_loading_ ABSL_GUARDED_BY(cache_mu_) = false;
  absl::Time cache_used_ ABSL_GUARDED_BY(cache_mu_);
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_QUERY_SERVICE_H_
