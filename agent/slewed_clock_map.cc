#include "agent/slewed_clock_map.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace meridian {
namespace {

// a - b, without overflow, as a double.
double Difference(int64_t a, int64_t b) {
  return static_cast<double>(static_cast<__int128>(a) - b);
}

int64_t Saturate(__int128 value) {
  if (value > std::numeric_limits<int64_t>::max()) {
    return std::numeric_limits<int64_t>::max();
  }
  if (value < std::numeric_limits<int64_t>::min()) {
    return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(value);
}

bool Plausible(double rate) { return std::isfinite(rate) && rate > 0; }

}  // namespace

SlewedClockMap::SlewedClockMap(ClockReading calibration, ClockReading now,
                               Options options)
    : options_(options), last_(now), baseline_(calibration) {
  const double rate = now.raw > calibration.raw
                          ? Difference(now.target, calibration.target) /
                                Difference(now.raw, calibration.raw)
                          : 0;
  if (Plausible(rate)) {
    rate_ = rate;
  } else {
    baseline_ = now;
  }
  segments_.push_back({now.raw, now.target, rate_});
}

int64_t SlewedClockMap::Apply(const Segment& segment, int64_t raw) {
  // Each step is monotone in raw (the slope is positive, and rounding and
  // saturating never reverse an order), so the whole is.
  const double scaled = segment.slope * Difference(raw, segment.raw);
  constexpr double kLimit = 9.2e18;  // within int64, for llround
  if (!(scaled < kLimit)) return std::numeric_limits<int64_t>::max();
  if (!(scaled > -kLimit)) return std::numeric_limits<int64_t>::min();
  return Saturate(static_cast<__int128>(segment.out) + std::llround(scaled));
}

int64_t SlewedClockMap::Map(int64_t raw) const {
  // Most records are recent: the newest segment first.
  if (raw >= segments_.back().raw) return Apply(segments_.back(), raw);
  if (raw < segments_.front().raw) return Apply(segments_.front(), raw);
  auto after = std::upper_bound(
      segments_.begin(), segments_.end(), raw,
      [](int64_t r, const Segment& segment) { return r < segment.raw; });
  return Apply(*std::prev(after), raw);
}

double SlewedClockMap::Elapsed(int64_t from, int64_t to) const {
  return Difference(to, from) * rate_;
}

void SlewedClockMap::Update(ClockReading reading) {
  if (reading.raw <= last_.raw) {
    ++ignored_;
    return;
  }
  MeasureRate(reading);
  last_ = reading;
  // reading.raw is past every breakpoint: the newest segment maps it.
  const Segment& newest = segments_.back();
  const int64_t mapped = Apply(newest, reading.raw);
  const double error = Difference(reading.target, mapped);
  if (error > options_.step_ns) {
    ++steps_;
    Append({reading.raw, reading.target, rate_});
    return;
  }
  const double elapsed = Elapsed(newest.raw, reading.raw);
  if (elapsed < options_.min_spacing_ns) return;
  // Closing the error over at least the time since the last breakpoint
  // keeps the correction from overshooting when breakpoints are far apart.
  const double horizon =
      std::max(static_cast<double>(options_.time_constant_ns), elapsed);
  const double max_slew = std::min(options_.max_slew_ppm * 1e-6, 0.5);
  const double slew = std::clamp(error / horizon, -max_slew, max_slew);
  Append({reading.raw, mapped, rate_ * (1 + slew)});
}

void SlewedClockMap::MeasureRate(ClockReading reading) {
  // A target that moved otherwise than the rate says since the previous
  // reading stepped (or the rate is far off): what came before it says
  // nothing of the rate now.
  const double expected = rate_ * Difference(reading.raw, last_.raw);
  const double moved = Difference(reading.target, last_.target);
  if (std::abs(moved - expected) > options_.target_jump_ns) {
    baseline_ = reading;
    has_candidate_ = false;
    return;
  }
  const double since = Elapsed(baseline_.raw, reading.raw);
  if (since < options_.min_rate_baseline_ns) return;
  const double rate = Difference(reading.target, baseline_.target) /
                      Difference(reading.raw, baseline_.raw);
  if (Plausible(rate)) rate_ = rate;
  // The baseline slides, from half a window old to a whole one.
  if (has_candidate_ && since >= options_.rate_window_ns) {
    baseline_ = candidate_;
    has_candidate_ = false;
  }
  if (!has_candidate_ &&
      Elapsed(baseline_.raw, reading.raw) >= options_.rate_window_ns / 2) {
    candidate_ = reading;
    has_candidate_ = true;
  }
}

void SlewedClockMap::Append(Segment segment) {
  segments_.push_back(segment);
  while (segments_.size() > std::max<size_t>(options_.max_breakpoints, 1)) {
    segments_.pop_front();
  }
}

}  // namespace meridian
