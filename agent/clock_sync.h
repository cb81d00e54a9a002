// ClockSync: measures this node's clock against the collector's, for the
// agent's batches. A thread sends a burst of `probes` Clock/Now requests
// every `period_ms` (the first at once), feeds each burst to a
// ClockEstimator and publishes the fit; every batch the agent spools carries
// the model current then (NodeAgent::SpoolBatch).
//
// The node's clock is the one spans are stamped with: CLOCK_REALTIME, with
// a ClockSkew applied. A skew is a test option (--clock-offset-ns,
// --clock-drift-ppm): it makes this agent's clock wrong on purpose, so that
// tests can check that the collector puts it right.
#ifndef MERIDIAN_AGENT_CLOCK_SYNC_H_
#define MERIDIAN_AGENT_CLOCK_SYNC_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "agent/clock_estimator.h"
#include "grpcpp/grpcpp.h"
#include "meridian/v1/clock.grpc.pb.h"

namespace meridian {

struct ClockSkew {
  int64_t offset_ns = 0;
  double drift_ppm = 0;
  int64_t origin_ns = 0;  // wall time at which the drift term is 0

  // The skewed clock's reading at wall time `wall_ns`.
  int64_t Apply(int64_t wall_ns) const;
};

// CLOCK_REALTIME, ns.
int64_t WallNs();

class ClockSync {
 public:
  ClockSync(std::shared_ptr<grpc::Channel> channel, ClockSkew skew,
            int period_ms, int probes = 8);
  ~ClockSync();  // stops the thread, cancelling a probe under way

  // The latest model (node unset; all zero before the first burst answered).
  v1::ClockModel Model() const;
  // The node's clock now.
  int64_t Now() const { return skew_.Apply(WallNs()); }
  const ClockSkew& skew() const { return skew_; }

 private:
  void Run();
  void Burst();

  std::unique_ptr<v1::Clock::Stub> stub_;
  const ClockSkew skew_;
  const int period_ms_;
  const int probes_;
  ClockEstimator estimator_;  // the thread's own
  bool reachable_ = true;     // the thread's own: logs changes only
  bool answered_ = false;     // the thread's own: the first answer logged
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  grpc::ClientContext* in_flight_ = nullptr;  // the probe under way
  v1::ClockModel model_;
  std::thread thread_;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_CLOCK_SYNC_H_
