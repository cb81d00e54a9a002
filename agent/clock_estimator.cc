#include "agent/clock_estimator.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace meridian {

bool ClockEstimator::AddBurst(absl::Span<const ClockProbe> probes) {
  const ClockProbe* best = nullptr;
  int64_t best_rtt = 0;
  for (const ClockProbe& p : probes) {
    const int64_t rtt = (p.t4 - p.t1) - (p.t3 - p.t2);
    if (rtt < 0 || p.t4 < p.t1) continue;
    if (best == nullptr || rtt < best_rtt) {
      best = &p;
      best_rtt = rtt;
    }
  }
  if (best == nullptr) return false;
  // Halves of sums of ns timestamps: exact in int64 for any real time.
  const int64_t time = best->t1 + (best->t4 - best->t1) / 2;
  const int64_t offset = ((best->t1 - best->t2) + (best->t4 - best->t3)) / 2;
  points_.push_back({time, offset, best_rtt / 2});
  while (static_cast<int>(points_.size()) > window_) points_.pop_front();
  return true;
}

v1::ClockModel ClockEstimator::Model() const {
  v1::ClockModel model;
  if (points_.empty()) return model;
  int64_t min_half = points_.front().half_rtt;
  for (const Point& p : points_) min_half = std::min(min_half, p.half_rtt);
  std::vector<const Point*> kept;
  for (const Point& p : points_) {
    if (p.half_rtt <= 3 * min_half) kept.push_back(&p);
  }
  const int64_t reference = points_.back().time;
  // Least squares in x = time - reference, centred on the means.
  const double n = static_cast<double>(kept.size());
  double mean_x = 0, mean_y = 0;
  for (const Point* p : kept) {
    mean_x += static_cast<double>(p->time - reference) / n;
    mean_y += static_cast<double>(p->offset) / n;
  }
  double sxx = 0, sxy = 0;
  for (const Point* p : kept) {
    const double dx = static_cast<double>(p->time - reference) - mean_x;
    sxx += dx * dx;
    sxy += dx * (static_cast<double>(p->offset) - mean_y);
  }
  const double drift = sxx > 0 ? sxy / sxx : 0;  // ns per ns
  const double offset = mean_y - drift * mean_x;
  double squares = 0;
  int64_t max_half = 0;
  for (const Point* p : kept) {
    const double r =
        static_cast<double>(p->offset) -
        (offset + drift * static_cast<double>(p->time - reference));
    squares += r * r;
    max_half = std::max(max_half, p->half_rtt);
  }
  model.set_reference_ns(reference);
  model.set_offset_ns(std::llround(offset));
  model.set_drift_ppb(std::llround(drift * 1e9));
  model.set_uncertainty_ns(max_half + std::llround(std::sqrt(squares / n)));
  return model;
}

}  // namespace meridian
