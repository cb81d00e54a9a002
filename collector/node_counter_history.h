// NodeCounterHistory: each node's counters as its agent reported them
// (v1::PollRequest.node_counters, agent/node_counters.h), kept for a few
// minutes so that a slowdown's report can name the counters that changed
// with it (docs/health.md, "Node counters").
//
// Contract:
//   - Check() is the boundary check of one report: at most kMaxCounters
//     counters, names of 1 to kMaxNameBytes bytes of [A-Za-z0-9_.:-],
//     finite values.
//   - Add() keeps a checked report of `node` taken at `node_ns` (the
//     node's clock), received at `at`: a report of a sample already kept
//     (the agent resends its last sample with every poll) is not kept
//     twice. Per node the last kSamples samples are kept; all nodes
//     together hold at most kMaxValues values: a node that would go beyond
//     is not followed (counted in refused()). A node silent for kForget is
//     forgotten at a later Add.
//   - Changed() compares `node`'s samples received before `from` less
//     kMargin (the last kWindow of them) with those received from `from`
//     on (the last kWindow): a counter with at least kMinSamples values on
//     both sides changed when the medians differ by at least a quarter of
//     the one before and by its floor (by the name's unit: 10 points of a
//     percentage, 1 MB/s, 1 error/s, 256 MiB, 100 MHz, 5 C, 25 W, any
//     change of throttle reasons). The largest changes first (relative to
//     max(|before|, floor)), at most kMaxChanges.
//   - Thread-safe.
#ifndef MERIDIAN_COLLECTOR_NODE_COUNTER_HISTORY_H_
#define MERIDIAN_COLLECTOR_NODE_COUNTER_HISTORY_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "google/protobuf/repeated_field.h"
#include "meridian/v1/control.pb.h"
#include "meridian/v1/query.pb.h"

namespace meridian {

class NodeCounterHistory {
 public:
  static constexpr int kMaxCounters = 512;
  static constexpr size_t kMaxNameBytes = 64;
  static constexpr size_t kSamples = 300;
  static constexpr size_t kMaxValues = size_t{1} << 22;
  static constexpr size_t kWindow = 60;
  static constexpr size_t kMinSamples = 3;
  static constexpr size_t kMaxChanges = 8;
  static constexpr absl::Duration kMargin = absl::Seconds(2);
  static constexpr absl::Duration kForget = absl::Minutes(10);

  using Counters = google::protobuf::RepeatedPtrField<v1::NodeCounterValue>;
  static absl::Status Check(const Counters& counters);

  void Add(const std::string& node, const Counters& counters, int64_t node_ns,
           absl::Time at);
  std::vector<v1::HealthCounterChange> Changed(const std::string& node,
                                               absl::Time from) const;
  uint64_t refused() const;

 private:
  struct Sample {
    absl::Time at;
    int64_t node_ns;
    std::vector<double> values;  // by Node::names; NaN: not in the sample
  };
  struct Node {
    std::map<std::string, size_t> index;  // name -> position in values
    std::vector<std::string> names;
    std::deque<Sample> samples;
    absl::Time last;
  };
  size_t ValuesOf(const Node& node) const;

  mutable absl::Mutex mutex_;
  std::map<std::string, Node> nodes_ ABSL_GUARDED_BY(mutex_);
  size_t values_ ABSL_GUARDED_BY(mutex_) = 0;
  absl::Time swept_ ABSL_GUARDED_BY(mutex_) = absl::InfinitePast();
  uint64_t refused_ ABSL_GUARDED_BY(mutex_) = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_NODE_COUNTER_HISTORY_H_
