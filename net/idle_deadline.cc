#include "net/idle_deadline.h"

namespace meridian {

IdleDeadline::IdleDeadline(grpc::ClientContext* context, absl::Duration timeout,
                           Clock clock)
    : context_(context),
      timeout_(timeout),
      // Deadlines are kept on the monotonic clock: a step of the wall clock
      // neither cancels a call early nor keeps a silent one.
      clock_(clock ? std::move(clock)
                   : [] { return std::chrono::steady_clock::now(); }),
      deadline_(Later()),
      thread_([this] { Watch(); }) {}

IdleDeadline::~IdleDeadline() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

std::chrono::steady_clock::time_point IdleDeadline::Later() const {
  return clock_() + absl::ToChronoNanoseconds(timeout_);
}

void IdleDeadline::Progress() {
  absl::MutexLock lock(&mu_);
  deadline_ = Later();
}

bool IdleDeadline::expired() const {
  absl::MutexLock lock(&mu_);
  return expired_;
}

void IdleDeadline::ClockMoved() {
  absl::MutexLock lock(&mu_);
  ++clock_moves_;
  auto looked = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return looked_ == clock_moves_ || !watching_;
  };
  mu_.Await(absl::Condition(&looked));
}

bool IdleDeadline::AwaitExpired(absl::Duration limit) const {
  absl::MutexLock lock(&mu_);
  return mu_.AwaitWithTimeout(absl::Condition(&expired_), limit);
}

void IdleDeadline::Watch() {
  {
    absl::MutexLock lock(&mu_);
    // Progress() may move the deadline while this waits: the time left is
    // worked out again at each wake-up.
    for (;;) {
      looked_ = clock_moves_;
      const auto left = deadline_ - clock_();
      if (left <= left.zero()) break;
      const uint64_t moves = clock_moves_;
      auto woken = [this, moves]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || clock_moves_ != moves;
      };
      mu_.AwaitWithTimeout(absl::Condition(&woken), absl::FromChrono(left));
      if (stopping_) {
        watching_ = false;
        return;
      }
    }
    expired_ = true;
    watching_ = false;
  }
  // Outside the lock: the call's interceptors run inside TryCancel.
  context_->TryCancel();
}

}  // namespace meridian
