// QueryService::Waits: `meridian waits` (docs/analysis.md, "Wait states"):
// the job's wait states by pattern over the whole job, or per step of a
// range of steps (only those steps loaded), optionally of some ranks.
#include <algorithm>
#include <utility>

#include "query/analysis/wait_states.h"
#include "query/job_analysis.h"
#include "query/query_service.h"

namespace meridian {
namespace {

// The reply of `result`, its entries of `ranks` (all if empty).
v1::WaitsReply WaitsReplyOf(const WaitStatesResult& result,
                            const std::vector<int32_t>& ranks) {
  auto wanted = [&ranks](int32_t rank) {
    return ranks.empty() ||
           std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
  };
  v1::WaitsReply reply;
  for (const WaitPatternEntry& e : result.patterns) {
    if (!wanted(e.rank)) continue;
    v1::WaitPattern* p = reply.add_patterns();
    p->set_pattern(e.pattern);
    p->set_rank(e.rank);
    if (e.step) p->set_step(*e.step);
    p->set_wait_ns(e.wait_ns);
    p->set_instances(e.instances);
    for (const WaitCause& c : e.caused_by) {
      v1::WaitCause* cause = p->add_caused_by();
      cause->set_rank(c.rank);
      cause->set_doing(c.in);
      cause->set_ns(c.ns);
    }
  }
  for (const RankWaits& r : result.ranks) {
    if (!wanted(r.rank)) continue;
    v1::RankWaitCost* cost = reply.add_ranks();
    cost->set_rank(r.rank);
    cost->set_wait_ns(r.wait_ns);
    cost->set_short_term_ns(r.short_term_ns);
    cost->set_long_term_ns(r.long_term_ns);
  }
  return reply;
}

}  // namespace

grpc::Status QueryService::Waits(grpc::ServerContext* context,
                                 const v1::WaitsRequest* request,
                                 v1::WaitsReply* reply) {
  if (grpc::Status may = MayReadJob(context, request->job()); !may.ok()) {
    return may;
  }
  if (request->has_first_step() != request->has_last_step() ||
      (request->has_first_step() &&
       request->first_step() > request->last_step())) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "steps: first_step and last_step together, first <= "
                        "last");
  }
  const std::vector<int32_t> ranks(request->ranks().begin(),
                                   request->ranks().end());
  if (!request->has_first_step()) {
    auto analysis = WholeJob(request->job(), kAnalysisBytesPerSpan);
    if (!analysis.ok()) return ToGrpc(analysis.status());
    *reply = WaitsReplyOf(WaitStates(*(*analysis)->graph, false), ranks);
    reply->set_job(request->job());
    return grpc::Status::OK;
  }
  const StepRange steps{request->first_step(), request->last_step()};
  auto analysis = LoadAnalysis(*memory_, db_path_, request->job(), steps);
  if (!analysis.ok()) return ToGrpc(analysis.status());
  // Per step of the range only: a load of some steps holds spans of
  // others in its window.
  *reply = WaitsReplyOf(WaitStates(*(*analysis)->graph, true,
                                   std::make_pair(steps.first, steps.last)),
                        ranks);
  reply->set_job(request->job());
  return grpc::Status::OK;
}

}  // namespace meridian
