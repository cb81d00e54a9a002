// ClockEstimator: fits a node's clock against the collector's from
// request/response probes (the agent's ClockSync sends them; tests feed a
// simulated network).
//
// A probe is four timestamps: t1 (request sent) and t4 (reply received) on
// the node's clock, t2 (request received) and t3 (reply sent) on the
// collector's. Its round trip is d = (t4 - t1) - (t3 - t2) and its offset
// estimate (node minus collector) is
//   theta = ((t1 - t2) + (t4 - t3)) / 2,
// which is off by at most d / 2: half the difference of the two one-way
// delays, and a round trip bounds that difference.
//
// Probes come in bursts (a few back to back); a burst keeps its probe with
// the smallest round trip, the one least delayed by queues and load. The
// estimator keeps the last `window` bursts, drops those whose half round
// trip exceeds 3 x the window's smallest (a burst of load), and fits a line
//   offset(t) = offset + drift * (t - reference)
// by least squares through the rest, reference being the newest burst's
// time (t1 + t4) / 2. With one burst the drift is 0.
//
// Model():
//   offset_ns, drift_ppb  the fit at the reference
//   uncertainty_ns        the largest half round trip among the bursts
//                         fitted (each one's offset error bound) plus the
//                         fit's RMS residual
//
// More: docs/clocks.md, "1. Probes: offset, drift, uncertainty" (a
// worked example, checked by clock_estimator_test.cc).
#ifndef MERIDIAN_AGENT_CLOCK_ESTIMATOR_H_
#define MERIDIAN_AGENT_CLOCK_ESTIMATOR_H_

#include <cstdint>
#include <deque>

#include "absl/types/span.h"
#include "meridian/v1/span.pb.h"

namespace meridian {

struct ClockProbe {
  int64_t t1 = 0;  // node: request sent
  int64_t t2 = 0;  // collector: request received
  int64_t t3 = 0;  // collector: reply sent
  int64_t t4 = 0;  // node: reply received
};

class ClockEstimator {
 public:
  explicit ClockEstimator(int window = 16) : window_(window) {}

  // Adds a burst's best probe; probes with a negative round trip (clocks
  // read out of order) are ignored. False if no probe was usable.
  bool AddBurst(absl::Span<const ClockProbe> probes);

  bool has_model() const { return !points_.empty(); }
  // The current fit (node unset); all zero before the first burst.
  v1::ClockModel Model() const;

 private:
  struct Point {
    int64_t time;      // node time of the probe's midpoint
    int64_t offset;    // node minus collector
    int64_t half_rtt;  // bound on the offset's error
  };
  int window_;
  std::deque<Point> points_;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_CLOCK_ESTIMATOR_H_
