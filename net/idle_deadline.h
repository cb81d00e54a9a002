// IdleDeadline: a deadline for a streamed gRPC call that moves with the
// call's progress.
//
// gRPC's own deadline is fixed when a call starts. That suits a call with
// one answer, not a stream that may rightly last hours (an export of a
// large job, an import of a large file, an agent's batches): for those the
// bound that matters is how long the other side may stay silent. An
// IdleDeadline cancels `context` (ClientContext::TryCancel) once `timeout`
// has passed since the later of its construction and the last Progress();
// the call then ends with CANCELLED, and expired() says that this is why.
//
// Example, timeout 10 s: answers at 3 s, 9 s and 15 s keep the call; if
// none follows the one at 15 s, the call is cancelled at 25 s.
//
// Construct it before the call starts (a call cancelled before it starts
// ends at once when it does). Progress() and expired() are thread-safe.
// One thread waits for the deadline; the destructor stops it and never
// cancels anything itself. `context` must outlive this object.
#ifndef MERIDIAN_NET_IDLE_DEADLINE_H_
#define MERIDIAN_NET_IDLE_DEADLINE_H_

#include <chrono>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"

namespace meridian {

class IdleDeadline {
 public:
  // What "now" is: the monotonic clock, or a test's.
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // `clock` null: std::chrono::steady_clock.
  IdleDeadline(grpc::ClientContext* context, absl::Duration timeout,
               Clock clock = nullptr);
  ~IdleDeadline();
  IdleDeadline(const IdleDeadline&) = delete;
  IdleDeadline& operator=(const IdleDeadline&) = delete;

  // Something arrived: the timeout starts again from now.
  void Progress();
  // Whether the deadline passed and the call was cancelled.
  bool expired() const;
  absl::Duration timeout() const { return timeout_; }

  // For a test's clock: it moved, so the deadline is looked at again now
  // (between calls the watcher waits on the real clock, for at most the
  // time its clock said was left). Returns once the watcher has looked.
  void ClockMoved();
  // Waits until the deadline has passed (expired()) or `limit` of real
  // time; whether it has.
  bool AwaitExpired(absl::Duration limit) const;

 private:
  void Watch();
  std::chrono::steady_clock::time_point Later() const;

  grpc::ClientContext* const context_;
  const absl::Duration timeout_;
  const Clock clock_;
  mutable absl::Mutex mu_;
  std::chrono::steady_clock::time_point deadline_ ABSL_GUARDED_BY(mu_);
  bool expired_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t clock_moves_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t looked_ ABSL_GUARDED_BY(mu_) = 0;  // clock_moves_ Watch saw last
  bool watching_ ABSL_GUARDED_BY(mu_) = true;
  std::thread thread_;
};

}  // namespace meridian

#endif  // MERIDIAN_NET_IDLE_DEADLINE_H_
