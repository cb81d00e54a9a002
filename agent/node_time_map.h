// NodeTimeMap: the node agent's one map from a probe's raw times to the
// node's clock (ClockSync::Now(): CLOCK_REALTIME with the test skew
// applied). Probes record time-stamp-counter ticks (records flagged kTicks)
// or CLOCK_MONOTONIC ns (MERIDIAN_CLOCK=monotonic, CPUs without an
// invariant counter, and the capture libraries' records):
//
//   ticks --(ticks_: SlewedClockMap)--> monotonic ns
//                                            |
//   monotonic ns ------------------(wall_: SlewedClockMap)--> node ns
//
// Contract (see slewed_clock_map.h for the maps themselves):
//   - One function, whichever drain converts a record: Update changes the
//     map only from the time it samples on, so a record written before it
//     maps the same after it (raw times older than the oldest breakpoint
//     kept, over an hour back, excepted).
//   - Monotone on each axis, exactly: raw t1 <= t2 gives ToWallNs(t1) <=
//     ToWallNs(t2), so spans of one clock never swap or poke out of their
//     enclosing span. Across the axes (a ticks record against a monotonic
//     one) the order is as good as ticks_ is, tens of ns.
//   - Continuous, except that a node clock stepped forward by more than
//     100 ms jumps there; one stepped backward is slewed at 500 ppm.
//   - Within about 100 ns of the node's clock in steady state (both maps'
//     errors: sample pairing, a few tens of ns, plus the rate's error over
//     the 1 s between breakpoints); an error below 100 ms is closed at
//     500 ppm at most, as NTP slews (docs/clocks.md has the figures).
//
// Samples: each Update reads the three clocks together (Sampler: the best
// of 8 reads, the one whose CLOCK_MONOTONIC reads bracket the others most
// tightly) and feeds both maps. Samples read over more than max_width_ns
// (a reader preempted in all 8 reads) are ignored and counted. The wall
// map's reading is placed no earlier than the monotonic time the tick map
// gives the sample's ticks, so that no monotonic time already converted
// lies past its newest breakpoint.
//
// Not thread-safe (the agent's loop owns it).
#ifndef MERIDIAN_AGENT_NODE_TIME_MAP_H_
#define MERIDIAN_AGENT_NODE_TIME_MAP_H_

#include <cstdint>
#include <functional>

#include "agent/slewed_clock_map.h"

namespace meridian {

// The three clocks, read together.
struct TimeSample {
  int64_t ticks;  // the time-stamp counter (CLOCK_MONOTONIC ns without one)
  int64_t monotonic_ns;
  int64_t wall_ns;  // the node's clock
  // How long the reads took: the clocks are paired to within half of it.
  int64_t width_ns;
};

class NodeTimeMap {
 public:
  struct Options {
    SlewedClockMap::Options map;
    // The first rates are measured over this long, in the constructor.
    int64_t calibration_ns = 20000000;
    int64_t max_width_ns = 20000;
  };

  // Reads clocks through `sample` (Sampler() for the real ones); calibrates
  // for options.calibration_ns (less if the clocks stop advancing, as fake
  // ones may).
  NodeTimeMap(std::function<TimeSample()> sample, Options options);
  explicit NodeTimeMap(std::function<TimeSample()> sample)
      : NodeTimeMap(std::move(sample), Options()) {}

  // The real counter and CLOCK_MONOTONIC, with `node_clock` (ns) read
  // between them: the best of `reads` tries.
  static std::function<TimeSample()> Sampler(
      std::function<int64_t()> node_clock, int reads = 8);

  // Samples the clocks and extends the map (each drain, before reading).
  void Update();

  // A record's time: ticks if `ticks`, else CLOCK_MONOTONIC ns.
  int64_t ToWallNs(int64_t raw, bool ticks) const {
    return wall_.Map(ticks ? ticks_.Map(raw) : raw);
  }

  const SlewedClockMap& ticks_map() const { return ticks_; }
  const SlewedClockMap& wall_map() const { return wall_; }
  uint64_t samples_ignored() const { return samples_ignored_; }

 private:
  // Two samples calibration_ns apart, for the first rates.
  struct Calibration {
    TimeSample first;
    TimeSample latest;
  };
  static Calibration Calibrate(const std::function<TimeSample()>& sample,
                               int64_t ns);
  NodeTimeMap(std::function<TimeSample()> sample, Options options,
              const Calibration& calibration);

  std::function<TimeSample()> sample_;
  Options options_;
  SlewedClockMap ticks_;
  SlewedClockMap wall_;
  uint64_t samples_ignored_ = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_NODE_TIME_MAP_H_
