// TraceRelay: the agent's side of job-wide `meridian trace`
// (meridian.v1.Control, collector/control_service.h).
//
// A thread polls the collector every `poll_ms` for trace orders made since
// its last poll. It queues them for the agent's loop and writes `wake_fd`
// (an eventfd) to wake it; the loop takes them (Take), applies each to its
// processes of the order's job, and reports how many (Applied). A report
// makes the thread poll again at once, so the collector hears back within
// one round trip. An unreachable collector is logged once and retried at
// the next poll. Each poll also carries what the agent last sampled of its
// processes' calls in flight (SetActivity), for the collector's health view.
#ifndef MERIDIAN_AGENT_TRACE_RELAY_H_
#define MERIDIAN_AGENT_TRACE_RELAY_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "grpcpp/grpcpp.h"
#include "meridian/v1/control.grpc.pb.h"

namespace meridian {

class TraceRelay {
 public:
  TraceRelay(std::shared_ptr<grpc::Channel> channel, std::string agent_id,
             std::string node, int poll_ms, int wake_fd);
  ~TraceRelay();  // stops the thread

  // The orders received since the last call, oldest first.
  std::vector<v1::TraceOrder> Take();
  // Order `id` now records in `processes` processes of this node.
  void Applied(uint64_t id, uint32_t processes);
  // What this node's processes are in (docs/health.md): sent at once (the
  // thread polls now), then with every poll until the next call replaces
  // it. The steps in it (ProcessActivity.steps, each sent once) that no
  // poll has delivered yet are kept into the next call's, per process, the
  // newest kMaxSteps of them.
  void SetActivity(std::vector<v1::ProcessActivity> activity);
  static constexpr int kMaxSteps = 1024;
  // The node's counters as last sampled: sent with every poll from now on.
  // `node_ns`: when, on the node's clock.
  void SetNodeCounters(std::vector<v1::NodeCounterValue> counters,
                       int64_t node_ns);
  // SetActivity's carrying: each process of `now` (by pid and job) gets the
  // steps `before` holds for it ahead of its own, the newest kMaxSteps;
  // `before`'s are moved out.
  static void CarrySteps(std::vector<v1::ProcessActivity>* before,
                         std::vector<v1::ProcessActivity>* now);

 private:
  void Run();
  void Poll();

  std::unique_ptr<v1::Control::Stub> stub_;
  const std::string agent_id_;
  const std::string node_;
  const int poll_ms_;
  const int wake_fd_;
  uint64_t after_ = 0;     // the thread's own
  bool reachable_ = true;  // the thread's own: logs changes only
  bool answered_ = false;  // the thread's own: the first answer logged
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  grpc::ClientContext* in_flight_ = nullptr;  // the poll under way
  bool report_ = false;  // Applied() since the last poll: poll now
  std::vector<v1::TraceOrder> orders_;
  std::vector<v1::PollRequest::Applied> applied_;
  std::vector<v1::ProcessActivity> activity_;
  std::vector<v1::NodeCounterValue> node_counters_;
  int64_t node_counters_ns_ = 0;
  uint64_t activity_generation_ = 0;  // SetActivity calls
  bool steps_delivered_ = true;       // activity_'s steps reached the collector
  std::thread thread_;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_TRACE_RELAY_H_
