#include "agent/tick_clock.h"

#include <time.h>

#include <cmath>

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

}  // namespace

ClockPair TickClock::Sample() {
#if defined(__x86_64__)
  const uint64_t before = __rdtsc();
  const int64_t ns = MonotonicNs();
  const uint64_t after = __rdtsc();
  return {before + (after - before) / 2, ns};
#else
  const int64_t ns = MonotonicNs();
  return {static_cast<uint64_t>(ns), ns};
#endif
}

TickClock::TickClock() : TickClock(&TickClock::Sample) {}

TickClock::TickClock(std::function<ClockPair()> sample)
    : sample_(std::move(sample)) {
  first_ = sample_();
  // Calibrate over at least 20 ms so that the first rate is good to about
  // a part in 10^6 (clock reads jitter by tens of ns).
  // (A source that stops advancing, as in tests, ends the wait too.)
  ClockPair previous = first_;
  latest_ = sample_();
  while (latest_.monotonic_ns - first_.monotonic_ns < 20000000 &&
         latest_.monotonic_ns != previous.monotonic_ns) {
    previous = latest_;
    latest_ = sample_();
  }
  Update();
}

void TickClock::Update() {
  latest_ = sample_();
  const double ticks = static_cast<double>(latest_.ticks - first_.ticks);
  if (ticks > 0) {
    ns_per_tick_ = (latest_.monotonic_ns - first_.monotonic_ns) / ticks;
  }
}

int64_t TickClock::ToMonotonicNs(uint64_t ticks) const {
  const double delta = static_cast<double>(static_cast<int64_t>(
      ticks - latest_.ticks));  // negative for ticks before the pair
  return latest_.monotonic_ns + std::llround(delta * ns_per_tick_);
}

}  // namespace meridian
