#include "collector/control_service.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace meridian {
namespace {

constexpr size_t kKeptOrders = 1024;
constexpr size_t kKeptApplied = 64;  // per agent
constexpr absl::Duration kDefaultTimeout = absl::Seconds(10);
constexpr absl::Duration kMaxTimeout = absl::Seconds(600);
constexpr absl::Duration kForgetAgent = absl::Minutes(10);
// Bounds on what a client may ask (a fake agent polling "every 2^32 ms"
// stayed live for months; one 5 MB job name broke every agent's polling).
constexpr size_t kMaxNameBytes = 256;  // job, agent id, node
constexpr size_t kMaxAgents = 10000;
constexpr absl::Duration kMinPoll = absl::Milliseconds(100);
constexpr absl::Duration kMaxPoll = absl::Seconds(60);
constexpr uint32_t kMaxSteps = 1000000;
constexpr uint32_t kMaxSeconds = 86400;

grpc::Status TooLong(const char* what, size_t bytes) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                      std::string(what) + " is " + std::to_string(bytes) +
                          " bytes; at most " + std::to_string(kMaxNameBytes) +
                          " are allowed");
}

}  // namespace

bool ControlService::Live(const Agent& agent, absl::Time now) const {
  return now - agent.last_poll <=
         std::max(3 * agent.poll_interval, absl::Seconds(3));
}

const uint32_t* ControlService::AppliedBy(const std::string& agent_id,
                                          uint64_t id) const {
  // A forgotten agent (PollTrace) is forgotten by a request still waiting
  // for it too: it did not answer.
  auto agent = agents_.find(agent_id);
  if (agent == agents_.end()) return nullptr;
  auto applied = agent->second.applied.find(id);
  return applied == agent->second.applied.end() ? nullptr : &applied->second;
}

bool ControlService::WithheldFrom(const std::string& agent_id,
                                  uint64_t id) const {
  auto agent = agents_.find(agent_id);
  return agent != agents_.end() && agent->second.withheld.count(id) > 0;
}

grpc::Status ControlService::RequestTrace(grpc::ServerContext* context,
                                          const v1::TraceRequest* request,
                                          v1::TraceReply* reply) {
  if (request->job().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no job given");
  }
  if (request->job().size() > kMaxNameBytes) {
    return TooLong("the job name", request->job().size());
  }
  if (grpc::Status may = auth_->Check(*context, Scope::kTrace, request->job());
      !may.ok()) {
    return may;
  }
  if ((request->steps() > 0) == (request->seconds() > 0)) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "give one of steps and seconds");
  }
  if (request->steps() > kMaxSteps || request->seconds() > kMaxSeconds) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "at most 1000000 steps or 86400 seconds");
  }
  const absl::Duration timeout =
      request->timeout_ms() == 0
          ? kDefaultTimeout
          : std::min(absl::Milliseconds(request->timeout_ms()), kMaxTimeout);
  absl::MutexLock lock(&mutex_);
  const absl::Time now = absl::Now();
  v1::TraceOrder& order = orders_.emplace_back();
  order.set_id(++latest_);
  order.set_job(request->job());
  order.set_steps(request->steps());
  order.set_seconds(request->seconds());
  const uint64_t id = order.id();
  if (orders_.size() > kKeptOrders) orders_.pop_front();
  std::vector<std::string> waiting_for;
  for (const auto& [agent_id, agent] : agents_) {
    if (Live(agent, now)) waiting_for.push_back(agent_id);
  }
  auto all_answered = [&]() ABSL_SHARED_LOCKS_REQUIRED(mutex_) {
    if (shutting_down_) return true;
    for (const std::string& agent_id : waiting_for) {
      if (AppliedBy(agent_id, id) == nullptr && !WithheldFrom(agent_id, id)) {
        return false;
      }
    }
    return true;
  };
  mutex_.AwaitWithDeadline(absl::Condition(&all_answered), now + timeout);
  reply->set_id(id);
  for (const std::string& agent_id : waiting_for) {
    if (WithheldFrom(agent_id, id)) continue;
    const uint32_t* processes = AppliedBy(agent_id, id);
    if (processes == nullptr) {
      reply->set_unanswered(reply->unanswered() + 1);
      continue;
    }
    v1::TraceReply::Node* node = reply->add_nodes();
    node->set_node(agents_.at(agent_id).node);
    node->set_agent_id(agent_id);
    node->set_processes(*processes);
  }
  return grpc::Status::OK;
}

grpc::Status ControlService::PollTrace(grpc::ServerContext* context,
                                       const v1::PollRequest* request,
                                       v1::PollReply* reply) {
  if (request->agent_id().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no agent id");
  }
  if (grpc::Status may = auth_->CheckAny(*context, Scope::kWrite); !may.ok()) {
    return may;
  }
  if (request->agent_id().size() > kMaxNameBytes) {
    return TooLong("the agent id", request->agent_id().size());
  }
  if (request->node().size() > kMaxNameBytes) {
    return TooLong("the node name", request->node().size());
  }
  if (grpc::Status may = auth_->CheckAgent(*context, request->agent_id());
      !may.ok()) {
    return may;
  }
  if (absl::Status ok = ActivityBoard::Check(request->activity()); !ok.ok()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        std::string(ok.message()));
  }
  if (absl::Status ok = NodeCounterHistory::Check(request->node_counters());
      !ok.ok()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        std::string(ok.message()));
  }
  if (slowdowns_ != nullptr) {
    slowdowns_->AddNodeCounters(request->node(), request->node_counters(),
                                request->node_counters_ns(), absl::Now());
  }
  if (board_ != nullptr) {
    std::vector<v1::ProcessActivity> activity;
    const absl::Time now = absl::Now();
    for (const v1::ProcessActivity& p : request->activity()) {
      if (!auth_->Allows(*context, Scope::kWrite, p.job())) continue;
      if (slowdowns_ != nullptr) slowdowns_->Add(request->node(), p, now);
      activity.push_back(p);
      activity.back().clear_steps();  // the watch's, not the board's
    }
    if (absl::Status s = board_->Report(request->agent_id(), request->node(),
                                        std::move(activity), absl::Now());
        !s.ok()) {
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          std::string(s.message()));
    }
  }
  absl::MutexLock lock(&mutex_);
  const absl::Time now = absl::Now();
  // Forgotten: agents silent for 10 minutes, or for 3 of their own polls
  // if they poll more rarely than that.
  for (auto it = agents_.begin(); it != agents_.end();) {
    const Agent& a = it->second;
    it = now - a.last_poll > std::max(kForgetAgent, 3 * a.poll_interval)
             ? agents_.erase(it)
             : std::next(it);
  }
  const bool known = agents_.count(request->agent_id()) > 0;
  if (!known && agents_.size() >= kMaxAgents) {
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        "the collector follows at most 10000 agents");
  }
  Agent& agent = agents_[request->agent_id()];
  agent.node = request->node();
  agent.last_poll = now;
  agent.poll_interval =
      std::clamp(absl::Milliseconds(request->poll_ms()), kMinPoll, kMaxPoll);
  // Only the latest kKeptApplied answers matter; a request with millions
  // costs no more than that.
  const int applied_count = request->applied_size();
  for (int i = std::max(0, applied_count - static_cast<int>(kKeptApplied));
       i < applied_count; ++i) {
    const v1::PollRequest::Applied& applied = request->applied(i);
    agent.applied[applied.id()] = applied.processes();
  }
  while (agent.applied.size() > kKeptApplied) {
    agent.applied.erase(agent.applied.begin());
  }
  reply->set_latest(latest_);
  // A new agent (or one this collector has not heard from: it restarted)
  // starts from now. So does one whose `after` is from an earlier run of
  // the collector (beyond latest).
  if (!known || request->after() > latest_) return grpc::Status::OK;
  for (const v1::TraceOrder& order : orders_) {
    if (order.id() <= request->after()) continue;
    if (auth_->Allows(*context, Scope::kWrite, order.job())) {
      *reply->add_orders() = order;
    } else {
      agent.withheld.insert(order.id());
    }
  }
  while (agent.withheld.size() > kKeptApplied) {
    agent.withheld.erase(agent.withheld.begin());
  }
  return grpc::Status::OK;
}

grpc::Status ControlService::DeleteJob(grpc::ServerContext* context,
                                       const v1::DeleteJobRequest* request,
                                       v1::DeleteJobReply* reply) {
  if (request->job().empty()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no job given");
  }
  if (request->job().size() > kMaxNameBytes) {
    return TooLong("the job name", request->job().size());
  }
  if (grpc::Status may = auth_->Check(*context, Scope::kWrite, request->job());
      !may.ok()) {
    return may;
  }
  if (!delete_job_) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                        "this collector cannot delete jobs");
  }
  absl::StatusOr<int64_t> spans = delete_job_(request->job());
  // The store's messages name its path: the log has them, the client gets
  // what it needs.
  if (absl::IsNotFound(spans.status())) {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("no job \"", request->job(),
                                     "\" in the collector's store"));
  }
  if (!spans.ok()) {
    spdlog::error("deleting job \"{}\": {}", request->job(),
                  std::string(spans.status().message()));
    return grpc::Status(
        grpc::StatusCode::INTERNAL,
        absl::StrCat("deleting job \"", request->job(),
                     "\" failed: the collector's log says why"));
  }
  reply->set_spans(*spans);
  return grpc::Status::OK;
}

void ControlService::Shutdown() {
  absl::MutexLock lock(&mutex_);
  shutting_down_ = true;
}

}  // namespace meridian
