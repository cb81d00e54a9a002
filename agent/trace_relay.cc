#include "agent/trace_relay.h"

#include <unistd.h>

#include <chrono>

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

void TraceRelay::SetActivity(std::vector<v1::ProcessActivity> activity) {
  std::lock_guard<std::mutex> lock(mutex_);
  activity_ = std::move(activity);
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
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const v1::ProcessActivity& p : activity_) *request.add_activity() = p;
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
