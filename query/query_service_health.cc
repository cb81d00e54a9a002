// QueryService's GetHealth (query_service.h): a job's live diagnosis from
// the collector's activity board, or "finished" for a stored job no
// process of which reports any more (docs/health.md).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "query/analysis/job_health.h"
#include "query/job_query.h"
#include "query/query_service.h"

namespace meridian {

grpc::Status QueryService::GetHealth(grpc::ServerContext* context,
                                     const v1::HealthRequest* request,
                                     v1::HealthReply* reply) {
  if (request->job().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "no job given; `meridian jobs` lists the jobs");
  }
  if (grpc::Status may = MayReadJob(context, request->job()); !may.ok()) {
    return may;
  }
  // At most a day: beyond it, nothing would ever count as stalled.
  constexpr int64_t kMaxStallAfterMs = int64_t{24} * 3600 * 1000;
  if (request->stall_after_ms() < 0 ||
      request->stall_after_ms() > kMaxStallAfterMs) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("stall_after_ms must be 0 (60 s) to ", kMaxStallAfterMs,
                     " (a day), not ", request->stall_after_ms()));
  }
  const int64_t stall_after_ns = request->stall_after_ms() == 0
                                     ? live_.stall_after_ns
                                     : request->stall_after_ms() * 1000000;
  std::vector<LiveProcess> live;
  if (live_.job) live = live_.job(request->job());
  std::vector<v1::HealthSlowdown> slowdowns;
  if (live_.slowdowns) slowdowns = live_.slowdowns(request->job());
  if (!live.empty()) {
    *reply = DiagnoseHealth(request->job(), live, stall_after_ns);
    for (v1::HealthSlowdown& s : slowdowns) *reply->add_slowdowns() = s;
    return grpc::Status::OK;
  }
  // No process of it reports. Stored and written to in the last 10 s: it
  // has just started, and its agents have not reported yet (they do every
  // second); else it has finished (or its agents predate health reports).
  // Not stored: there is no such job.
  auto stored = OpenJob(db_path_, request->job());
  if (!stored.ok()) return ToGrpc(stored.status());
  constexpr int64_t kReportsDueNs = int64_t{10} * 1000000000;
  const int64_t written_ago =
      absl::GetCurrentTimeNanos() - stored->catalog.job.written_ns;
  reply->set_job(request->job());
  reply->set_state(written_ago < kReportsDueNs ? "running" : "finished");
  reply->set_stall_after_ns(stall_after_ns);
  // What its ranks slowed by while they ran (kept 10 minutes after).
  for (v1::HealthSlowdown& s : slowdowns) *reply->add_slowdowns() = s;
  return grpc::Status::OK;
}

void QueryService::AddHealth(v1::ListJobsReply* reply) const {
  if (!live_.jobs) return;
  const std::vector<std::string> live = live_.jobs();
  for (v1::JobSummary& job : *reply->mutable_jobs()) {
    if (!std::binary_search(live.begin(), live.end(), job.job())) continue;
    std::vector<LiveProcess> processes = live_.job(job.job());
    if (processes.empty()) continue;  // gone since
    job.set_health(
        DiagnoseHealth(job.job(), processes, live_.stall_after_ns).state());
  }
}

}  // namespace meridian
