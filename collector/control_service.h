// ControlService: meridian.v1.Control, job-wide `meridian trace`.
//
// The collector cannot reach the agents (they connect to it), so orders
// wait here: RequestTrace adds an order and waits; each agent's PollTrace
// (every poll_ms) takes the orders made since its last poll and, in its
// next poll, reports how many processes each one reached. RequestTrace
// answers when every live agent (one that polled within 3 of its poll
// intervals, at least 3 s) has reported the order, or at its timeout. An
// agent whose token may not write the order's job is never sent it: once
// it has polled past the order it is not waited for, nor named in the reply.
//
// Example: agents a and b poll every 1 s. At t = 0 `meridian trace --job J
// --steps 2` adds order 7 and waits for a and b. At 0.4 s a polls, gets
// order 7, makes its 4 processes of J record, and polls again at once
// reporting {7, 4}; b does the same at 0.9 s with {7, 0} (it serves no
// process of J). The reply: order 7, nodes a: 4 and b: 0, none unanswered.
//
// State is in memory: a collector restart forgets orders and agents (the
// agents' next polls make them known again).
#ifndef MERIDIAN_COLLECTOR_CONTROL_SERVICE_H_
#define MERIDIAN_COLLECTOR_CONTROL_SERVICE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collector/activity_board.h"
#include "collector/authorizer.h"
#include "collector/slowdown_watch.h"
#include "meridian/v1/control.grpc.pb.h"

namespace meridian {

// RequestTrace needs the trace scope on the job; PollTrace some write scope,
// and answers only the orders of jobs the token may write.
class ControlService final : public v1::Control::Service {
 public:
  // Deletes a job from the store (on the writer); its span count.
  using DeleteFn =
      std::function<absl::StatusOr<int64_t>(const std::string& job)>;

  // `board` (not owned; may be null) takes the activity agents report with
  // their polls (docs/health.md), of the jobs each agent may write, and
  // `slowdowns` (not owned; may be null) the steps in it.
  explicit ControlService(std::shared_ptr<const Authorizer> auth,
                          DeleteFn delete_job = nullptr,
                          ActivityBoard* board = nullptr,
                          SlowdownWatch* slowdowns = nullptr)
      : auth_(std::move(auth)),
        delete_job_(std::move(delete_job)),
        board_(board),
        slowdowns_(slowdowns) {}
  grpc::Status RequestTrace(grpc::ServerContext* context,
                            const v1::TraceRequest* request,
                            v1::TraceReply* reply) override;
  grpc::Status PollTrace(grpc::ServerContext* context,
                         const v1::PollRequest* request,
                         v1::PollReply* reply) override;
  grpc::Status DeleteJob(grpc::ServerContext* context,
                         const v1::DeleteJobRequest* request,
                         v1::DeleteJobReply* reply) override;

  // Makes waiting RequestTrace calls answer now (with what they have), and
  // later ones at once: for the collector's shutdown.
  void Shutdown();

 private:
  struct Agent {
    std::string node;
    absl::Time last_poll;
    absl::Duration poll_interval;
    std::map<uint64_t, uint32_t> applied;  // order id -> processes
    // Orders it was not sent (its token may not write their job): not
    // waited for, and not in the reply.
    std::set<uint64_t> withheld;
  };

  bool Live(const Agent& agent, absl::Time now) const;
  // The processes agent `agent_id` applied order `id` to; nullptr if it has
  // not (or is forgotten).
  const uint32_t* AppliedBy(const std::string& agent_id, uint64_t id) const
      ABSL_SHARED_LOCKS_REQUIRED(mutex_);
  // Whether order `id` was withheld from agent `agent_id`.
  bool WithheldFrom(const std::string& agent_id, uint64_t id) const
      ABSL_SHARED_LOCKS_REQUIRED(mutex_);

  const std::shared_ptr<const Authorizer> auth_;
  const DeleteFn delete_job_;
  ActivityBoard* const board_;
  SlowdownWatch* const slowdowns_;
  absl::Mutex mutex_;
  uint64_t latest_ ABSL_GUARDED_BY(mutex_) = 0;
  std::deque<v1::TraceOrder> orders_ ABSL_GUARDED_BY(mutex_);    // newest last
  std::map<std::string, Agent> agents_ ABSL_GUARDED_BY(mutex_);  // by id
  bool shutting_down_ ABSL_GUARDED_BY(mutex_) = false;
};

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_CONTROL_SERVICE_H_
