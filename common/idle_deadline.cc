#include "common/idle_deadline.h"

namespace meridian {

IdleDeadline::IdleDeadline(grpc::ClientContext* context, absl::Duration timeout)
    : context_(context),
      timeout_(timeout),
      deadline_(absl::Now() + timeout),
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
  deadline_ = absl::Now() + timeout_;
}

bool IdleDeadline::expired() const {
  absl::MutexLock lock(&mu_);
  return expired_;
}

void IdleDeadline::Watch() {
  {
    absl::MutexLock lock(&mu_);
    // Wakes at the deadline as it stood when the wait began; Progress() may
    // have moved it since, so it is read again before giving up.
    for (;;) {
      const absl::Time deadline = deadline_;
      if (mu_.AwaitWithDeadline(absl::Condition(&stopping_), deadline)) return;
      if (absl::Now() >= deadline_) break;
    }
    expired_ = true;
  }
  // Outside the lock: the call's interceptors run inside TryCancel.
  context_->TryCancel();
}

}  // namespace meridian
