// QueryService's replays (query_service.h): Replay, a whole job's replay
// a block of steps at a time, and the replayed trace.
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "query/analysis/replay.h"
#include "query/analysis/replay_report.h"
#include "query/analysis/streamed_replay.h"
#include "query/export/replay_trace.h"
#include "query/job_analysis.h"
#include "query/job_query.h"
#include "query/query_service.h"
#include "query/trace_chunks.h"

namespace meridian {
namespace {

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
