// SlewedClockMap: maps a raw clock (time-stamp-counter ticks, or
// CLOCK_MONOTONIC ns) to a target clock (CLOCK_MONOTONIC, or the node's
// wall clock) with one function that only ever grows at its newest end.
//
// Contract:
//   - Monotone, exactly: raw r1 <= r2 gives Map(r1) <= Map(r2), at any
//     moment, in integer ns, whatever the readings were (wrong, jittery,
//     stepping backward).
//   - Fixed where it has been: Update changes the function only from the
//     reading's raw time on. So a raw time maps the same before and after,
//     if it is earlier than the reading, as every time the agent read
//     before sampling is. Dropping the oldest breakpoint (beyond
//     max_breakpoints) changes raw times before the new oldest one only.
//   - Continuous, except that a target ahead of the map by more than step_ns
//     makes it jump forward (never backward) to the target.
//   - Tracks the target: an error e below step_ns is closed by slewing the
//     rate by e / time_constant, at most max_slew_ppm (500 ppm, as NTP
//     slews). With the defaults the error falls by 500 us a second while
//     over 1 ms, then halves every second: 10 ms is down to 1 ms in 18 s
//     and to 1 us 10 s later. In steady state (a target at a constant rate
//     against raw, readings good to J) the error stays within about J plus
//     the rate's error times the breakpoint spacing (docs/clocks.md has
//     the agent's figures).
//
// The function is piecewise linear. Each breakpoint (raw, out, slope)
// starts a segment: Map(r) = out + round(slope * (r - raw)) for r from its
// raw to the next breakpoint's; the oldest segment also serves raw times
// before it, the newest those after it. An Update whose reading is
// min_spacing_ns or more past the newest breakpoint appends one where the
// newest segment has reached (continuity) with slope
//   rate * (1 + clamp(error / max(time_constant, elapsed), +-max_slew)),
// where rate is the target's measured rate against raw (over the last
// rate_window_ns of readings) and error is the reading's target minus the
// map at its raw time. Readings in between only refine the rate.
//
// Example (raw and target in ns, default options). Calibration readings
// (0 -> 0) and (1 s -> 1 s): rate 1, the map starts at 1 s -> 1 s. At raw
// 2 s the target reads 2.001 s (it was stepped by 1 ms): the map reads 2 s,
// error +1 ms, below step_ns. A breakpoint (2 s -> 2 s) with slope
// 1 + 1 ms / 2 s = 1.0005: the map reaches 3.0005 s at raw 3 s, where the
// target reads 3.001 s; slope 1.00025 from there, and so on, the error
// halving every second (4 s -> 4.00075 s, 5 s -> 5.000875 s, ...). Had the
// target read 2.150 s (150 ms ahead), the map would have jumped there.
// Had it read 1.999 s, the map would slow by 500 ppm: Map(2 s) is 2 s and
// stays so; nothing already mapped moves back.
//
// Not thread-safe (the agent's loop owns it).
#ifndef MERIDIAN_AGENT_SLEWED_CLOCK_MAP_H_
#define MERIDIAN_AGENT_SLEWED_CLOCK_MAP_H_

#include <cstddef>
#include <cstdint>
#include <deque>

namespace meridian {

// The target clock read `target` when the raw clock read `raw`.
struct ClockReading {
  int64_t raw;
  int64_t target;
};

class SlewedClockMap {
 public:
  // Durations are in the target's ns.
  struct Options {
    // The most the map's rate may differ from the measured rate while it
    // closes an error (500 ppm: NTP's and adjtime's limit).
    double max_slew_ppm = 500;
    // An error is closed over this time, or more at max_slew_ppm.
    int64_t time_constant_ns = 2000000000;
    // A target ahead of the map by more than this stepped: the map jumps
    // forward to it. Behind by as much, it is slewed all the same (a map
    // never goes back): 100 ms takes 200 s.
    int64_t step_ns = 100000000;
    // Breakpoints are at least this far apart; the rate of a segment needs
    // no finer correction, and so 4096 of them cover over an hour.
    int64_t min_spacing_ns = 1000000000;
    // At most this many breakpoints; the oldest is dropped beyond.
    size_t max_breakpoints = 4096;
    // The rate is measured over at least min_rate_baseline_ns and at most
    // about rate_window_ns of readings (so it follows a rate that changes,
    // as NTP changes CLOCK_MONOTONIC's against the counter).
    int64_t min_rate_baseline_ns = 20000000;
    int64_t rate_window_ns = 600000000000;
    // A reading this far from the previous one carried forward at the
    // measured rate means the target stepped: the rate is measured anew
    // from it (the previous rate holding meanwhile).
    int64_t target_jump_ns = 100000;
  };

  // Starts the map at `now` with the rate measured from `calibration` to
  // `now` (1 if `now` is not later; a guess until readings correct it).
  SlewedClockMap(ClockReading calibration, ClockReading now, Options options);
  SlewedClockMap(ClockReading calibration, ClockReading now)
      : SlewedClockMap(calibration, now, Options()) {}

  // Takes a reading (see the top). One whose raw time is not after the
  // previous reading's is ignored.
  void Update(ClockReading reading);
  // Saturates at the int64 range for raw times too far out to map.
  int64_t Map(int64_t raw) const;

  // The target's measured rate against raw.
  double rate() const { return rate_; }
  // The newest segment's slope.
  double slope() const { return segments_.back().slope; }
  size_t breakpoints() const { return segments_.size(); }
  // The oldest raw time mapped by its own segment; older ones use it too.
  int64_t oldest_raw() const { return segments_.front().raw; }
  // Forward jumps (steps) taken, and readings ignored.
  uint64_t steps() const { return steps_; }
  uint64_t ignored() const { return ignored_; }

 private:
  struct Segment {
    int64_t raw;
    int64_t out;
    double slope;
  };
  static int64_t Apply(const Segment& segment, int64_t raw);
  // Target ns elapsed from raw `from` to `to` at the measured rate.
  double Elapsed(int64_t from, int64_t to) const;
  void MeasureRate(ClockReading reading);
  void Append(Segment segment);

  Options options_;
  std::deque<Segment> segments_;  // by raw, increasing; never empty
  double rate_ = 1;
  ClockReading last_;      // the previous reading
  ClockReading baseline_;  // the rate is measured from here
  // The next baseline, once the current one is rate_window_ns old.
  ClockReading candidate_{};
  bool has_candidate_ = false;
  uint64_t steps_ = 0;
  uint64_t ignored_ = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_SLEWED_CLOCK_MAP_H_
