#include "agent/clock_sync.h"

#include <time.h>

#include <chrono>
#include <cmath>
#include <vector>

#include "spdlog/spdlog.h"

namespace meridian {

int64_t ClockSkew::Apply(int64_t wall_ns) const {
  return wall_ns + offset_ns +
         std::llround(drift_ppm * 1e-6 *
                      static_cast<double>(wall_ns - origin_ns));
}

int64_t WallNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

ClockSync::ClockSync(std::shared_ptr<grpc::Channel> channel, ClockSkew skew,
                     int period_ms, int probes)
    : stub_(v1::Clock::NewStub(std::move(channel))),
      skew_(skew),
      period_ms_(period_ms),
      probes_(probes),
      thread_([this] { Run(); }) {}

ClockSync::~ClockSync() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    // A probe waiting on an unresponsive collector (up to its 1 s deadline)
    // ends now: a stopping agent does not wait on the network.
    if (in_flight_ != nullptr) in_flight_->TryCancel();
  }
  wake_.notify_all();
  thread_.join();
}

v1::ClockModel ClockSync::Model() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return model_;
}

void ClockSync::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    Burst();
    lock.lock();
    wake_.wait_for(lock, std::chrono::milliseconds(period_ms_),
                   [this] { return stopping_; });
  }
}

void ClockSync::Burst() {
  std::vector<ClockProbe> burst;
  grpc::Status failure;
  for (int i = 0; i < probes_; ++i) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(1));
    v1::NowRequest request;
    v1::NowReply reply;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return;
      in_flight_ = &context;
    }
    const int64_t t1 = Now();
    request.set_client_send_ns(t1);
    grpc::Status status = stub_->Now(&context, request, &reply);
    const int64_t t4 = Now();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      in_flight_ = nullptr;
    }
    if (!status.ok()) {
      failure = status;
      break;  // the next burst tries again
    }
    burst.push_back({t1, reply.server_recv_ns(), reply.server_send_ns(), t4});
  }
  if (burst.empty() || !estimator_.AddBurst(burst)) {
    if (reachable_) {
      spdlog::warn(
          "clock sync: the collector's clock is unreachable ({}); "
          "keeping the last model",
          failure.error_message());
    }
    reachable_ = false;
    return;
  }
  if (!answered_) {
    spdlog::info("clock sync: the collector's clock answers");
  } else if (!reachable_) {
    spdlog::info("clock sync: the collector's clock answers again");
  }
  answered_ = true;
  reachable_ = true;
  const v1::ClockModel model = estimator_.Model();
  std::lock_guard<std::mutex> lock(mutex_);
  model_ = model;
}

}  // namespace meridian
