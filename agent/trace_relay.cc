#include "agent/trace_relay.h"

#include <unistd.h>

#include <chrono>
#include <map>
#include <utility>

#include "spdlog/spdlog.h"

namespace meridian {

TraceRelay::TraceRelay(std::shared_ptr<grpc::Channel> channel,
                       std::string agent_id, std::string node, int poll_ms,
                       int wake_fd)
    : stub_(v1::Control::NewStub(channel)),
      agent_id_(std::move(agent_id)),
      node_(std::move(node)),
      poll_ms_(poll_ms),
      wake_fd_(wake_fd),
      thread_([this] { Run(); }) {}

TraceRelay::~TraceRelay() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    // A poll waiting on an unresponsive collector ends now.
    if (in_flight_ != nullptr) in_flight_->TryCancel();
  }
  changed_.notify_all();
  thread_.join();
}

std::vector<v1::TraceOrder> TraceRelay::Take() {
  std::vector<v1::TraceOrder> taken;
  std::lock_guard<std::mutex> lock(mutex_);
  taken.swap(orders_);
  return taken;
}

void TraceRelay::Applied(uint64_t id, uint32_t processes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    v1::PollRequest::Applied& applied = applied_.emplace_back();
    applied.set_id(id);
    applied.set_processes(processes);
    report_ = true;
  }
  changed_.notify_all();
}

void TraceRelay::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    Poll();
    lock.lock();
    changed_.wait_for(lock, std::chrono::milliseconds(poll_ms_),
                      [this] { return stopping_ || report_; });
    report_ = false;
  }
}

void TraceRelay::CarrySteps(std::vector<v1::ProcessActivity>* before,
                            std::vector<v1::ProcessActivity>* now) {
  std::map<std::pair<int64_t, std::string>, v1::ProcessActivity*> by_process;
  for (v1::ProcessActivity& p : *now) by_process[{p.pid(), p.job()}] = &p;
  for (v1::ProcessActivity& old : *before) {
    auto it = by_process.find({old.pid(), old.job()});
    if (old.steps().empty() || it == by_process.end()) continue;
    google::protobuf::RepeatedPtrField<v1::StepTime>* steps =
        old.mutable_steps();
    steps->MergeFrom(it->second->steps());
    if (steps->size() > kMaxSteps) {
      steps->DeleteSubrange(0, steps->size() - kMaxSteps);
    }
    it->second->mutable_steps()->Swap(steps);
  }
}

void TraceRelay::SetActivity(std::vector<v1::ProcessActivity> activity) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!steps_delivered_) CarrySteps(&activity_, &activity);
  activity_ = std::move(activity);
  ++activity_generation_;
  steps_delivered_ = false;
  report_ = true;  // sent now
  changed_.notify_all();
}

void TraceRelay::SetNodeCounters(std::vector<v1::NodeCounterValue> counters,
                                 int64_t node_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  node_counters_ = std::move(counters);
  node_counters_ns_ = node_ns;
}

void TraceRelay::Poll() {
  v1::PollRequest request;
  request.set_agent_id(agent_id_);
  request.set_node(node_);
  request.set_after(after_);
  request.set_poll_ms(poll_ms_);
  std::vector<v1::PollRequest::Applied> applied;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    applied.swap(applied_);
  }
  for (const auto& a : applied) *request.add_applied() = a;
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const v1::ProcessActivity& p : activity_) *request.add_activity() = p;
    for (const v1::NodeCounterValue& c : node_counters_) {
      *request.add_node_counters() = c;
    }
    request.set_node_counters_ns(node_counters_ns_);
    generation = activity_generation_;
  }
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(poll_ms_ + 2000));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    in_flight_ = &context;
  }
  v1::PollReply reply;
  const grpc::Status status = stub_->PollTrace(&context, request, &reply);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    in_flight_ = nullptr;
  }
  if (!status.ok()) {
    if (reachable_) {
      spdlog::warn("trace relay: the collector does not answer ({})",
                   status.error_message());
    }
    reachable_ = false;
    // Reported again at the next poll (not at once: it failed just now).
    std::lock_guard<std::mutex> lock(mutex_);
    applied_.insert(applied_.begin(), applied.begin(), applied.end());
    return;
  }
  {
    // Its steps delivered: not sent again with the same activity.
    std::lock_guard<std::mutex> lock(mutex_);
    if (generation == activity_generation_ && !steps_delivered_) {
      for (v1::ProcessActivity& p : activity_) p.clear_steps();
      steps_delivered_ = true;
    }
  }
  if (!answered_) {
    spdlog::info("trace relay: the collector answers");
  } else if (!reachable_) {
    spdlog::info("trace relay: the collector answers again");
  }
  answered_ = true;
  reachable_ = true;
  after_ = reply.latest();
  if (reply.orders().empty()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const v1::TraceOrder& order : reply.orders()) {
      orders_.push_back(order);
    }
  }
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

}  // namespace meridian
