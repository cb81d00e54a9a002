#include "agent/node_time_map.h"

#include <time.h>

#include <algorithm>
#include <limits>
#include <utility>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace meridian {
namespace {

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t Ticks() {
#if defined(__x86_64__)
  return static_cast<int64_t>(__rdtsc());
#else
  return MonotonicNs();  // as the probe records without a counter
#endif
}

constexpr int64_t kMaxAhead = 1000000;  // ns

}  // namespace

std::function<TimeSample()> NodeTimeMap::Sampler(
    std::function<int64_t()> node_clock, int reads) {
  return [node_clock = std::move(node_clock), reads] {
    TimeSample best{0, 0, 0, std::numeric_limits<int64_t>::max()};
    for (int i = 0; i < std::max(reads, 1); ++i) {
      const int64_t ticks_before = Ticks();
      const int64_t before = MonotonicNs();
      const int64_t wall = node_clock();
      const int64_t after = MonotonicNs();
      const int64_t ticks_after = Ticks();
      // A read preempted between the two monotonic reads shows as a wide
      // bracket: the narrowest pairs the clocks best.
      if (after - before < best.width_ns) {
        best = {ticks_before + (ticks_after - ticks_before) / 2,
                before + (after - before) / 2, wall, after - before};
      }
    }
    return best;
  };
}

NodeTimeMap::Calibration NodeTimeMap::Calibrate(
    const std::function<TimeSample()>& sample, int64_t ns) {
  Calibration c;
  c.first = sample();
  TimeSample previous = c.first;
  c.latest = sample();
  // A source that stops advancing, as in tests, ends the wait too.
  while (c.latest.monotonic_ns - c.first.monotonic_ns < ns &&
         c.latest.monotonic_ns != previous.monotonic_ns) {
    previous = c.latest;
    c.latest = sample();
  }
  return c;
}

NodeTimeMap::NodeTimeMap(std::function<TimeSample()> sample, Options options)
    : NodeTimeMap(sample, options, Calibrate(sample, options.calibration_ns)) {}

NodeTimeMap::NodeTimeMap(std::function<TimeSample()> sample, Options options,
                         const Calibration& calibration)
    : sample_(std::move(sample)),
      options_(options),
      ticks_({calibration.first.ticks, calibration.first.monotonic_ns},
             {calibration.latest.ticks, calibration.latest.monotonic_ns},
             options.map),
      wall_({calibration.first.monotonic_ns, calibration.first.wall_ns},
            {calibration.latest.monotonic_ns, calibration.latest.wall_ns},
            options.map) {}

void NodeTimeMap::Update() {
  const TimeSample s = sample_();
  if (s.width_ns > options_.max_width_ns) {
    ++samples_ignored_;
    return;
  }
  // Records in ticks read so far lie before s.ticks, so they were mapped to
  // at most this monotonic time; the wall map's breakpoint must not come
  // before it (where ticks_ runs ahead of the clock by a few ns). Capped,
  // so that a counter that jumped cannot drag the wall map along.
  const int64_t mapped = ticks_.Map(s.ticks);
  const int64_t ahead =
      mapped > s.monotonic_ns
          ? static_cast<int64_t>(std::min<uint64_t>(
                static_cast<uint64_t>(mapped) - s.monotonic_ns, kMaxAhead))
          : 0;
  ticks_.Update({s.ticks, s.monotonic_ns});
  wall_.Update({s.monotonic_ns + ahead, s.wall_ns + ahead});
}

}  // namespace meridian
