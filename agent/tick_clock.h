// TickClock: maps the CPU's time-stamp counter, which the probe reads
// instead of clock_gettime when the counter is invariant (about 10 ns
// instead of 23 on our machines), to CLOCK_MONOTONIC nanoseconds.
//
// The agent runs on the same host, so it reads the same counter. It pairs
// counter and clock readings (a clock read between two counter reads, paired
// with their midpoint): one at construction after a 20 ms calibration, and
// one at every Update (each drain). The rate is taken over the whole span
// since construction, so it gets more exact as the agent runs; a tick is
// mapped from the latest pair, which is at most one drain period away from
// the records being read. Example: pairs (tick 1000, 50 ns) and
// (tick 3001000, 1000050 ns) give 1/3 ns per tick; tick 3001300 maps to
// 1000050 + 300 / 3 = 1000150 ns.
//
// Not thread-safe (the agent's loop owns it).
#ifndef MERIDIAN_AGENT_TICK_CLOCK_H_
#define MERIDIAN_AGENT_TICK_CLOCK_H_

#include <cstdint>
#include <functional>

namespace meridian {

struct ClockPair {
  uint64_t ticks;
  int64_t monotonic_ns;
};

class TickClock {
 public:
  // Reads the real counter and clock; calibrates for 20 ms.
  TickClock();
  // For tests: `sample` returns the pairs.
  explicit TickClock(std::function<ClockPair()> sample);

  void Update();
  int64_t ToMonotonicNs(uint64_t ticks) const;
  double ns_per_tick() const { return ns_per_tick_; }

  // A pair read now from the real counter and CLOCK_MONOTONIC.
  static ClockPair Sample();

 private:
  std::function<ClockPair()> sample_;
  ClockPair first_{};
  ClockPair latest_{};
  double ns_per_tick_ = 1.0;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_TICK_CLOCK_H_
