#include "common/idle_deadline.h"

namespace meridian {
namespace {

// Deadlines are kept on the monotonic clock: a step of the wall clock
// neither cancels a call early nor keeps a silent one.
std::chrono::steady_clock::time_point Later(absl::Duration timeout) {
  return std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
}

}  // namespace

IdleDeadline::IdleDeadline(grpc::ClientContext* context, absl::Duration timeout)
    : context_(context),
      timeout_(timeout),
      deadline_(Later(timeout)),
      thread_([this] { Watch(); }) {}

IdleDeadline::~IdleDeadline() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void IdleDeadline::Progress() {
  absl::MutexLock lock(&mu_);
  deadline_ = Later(timeout_);
}

bool IdleDeadline::expired() const {
  absl::MutexLock lock(&mu_);
  return expired_;
}

void IdleDeadline::Watch() {
  {
    absl::MutexLock lock(&mu_);
    // Progress() may move the deadline while this waits: the time left is
    // worked out again at each wake-up.
    for (;;) {
      const auto left = deadline_ - std::chrono::steady_clock::now();
      if (left <= left.zero()) break;
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping_),
                               absl::FromChrono(left))) {
        return;
      }
    }
    expired_ = true;
  }
  // Outside the lock: the call's interceptors run inside TryCancel.
  context_->TryCancel();
}

}  // namespace meridian
