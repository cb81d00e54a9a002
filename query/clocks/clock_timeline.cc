#include "query/clocks/clock_timeline.h"

#include <algorithm>
#include <cmath>

namespace meridian {
namespace {

double Predict(const NodeClockModel& m, int64_t t) {
  return static_cast<double>(m.offset_ns) +
         static_cast<double>(m.drift_ppb) *
             static_cast<double>(t - m.reference_ns) / 1e9;
}

}  // namespace

ClockTimeline::ClockTimeline(std::vector<NodeClockModel> models) {
  for (const NodeClockModel& m : models) {
    if (models_.empty() || m.reference_ns > models_.back().reference_ns) {
      models_.push_back(m);
    }
  }
}

size_t ClockTimeline::Locate(int64_t t, double* weight) const {
  *weight = 0;
  auto after = std::upper_bound(
      models_.begin(), models_.end(), t,
      [](int64_t v, const NodeClockModel& m) { return v < m.reference_ns; });
  if (after == models_.begin()) return 0;
  const size_t k = static_cast<size_t>(after - models_.begin()) - 1;
  if (k + 1 < models_.size()) {
    const int64_t from = models_[k].reference_ns;
    const int64_t to = models_[k + 1].reference_ns;
    *weight = static_cast<double>(t - from) / static_cast<double>(to - from);
  }
  return k;
}

int64_t ClockTimeline::OffsetAt(int64_t t) const {
  if (models_.empty()) return 0;
  double w;
  const size_t k = Locate(t, &w);
  if (w <= 0) return std::llround(Predict(models_[k], t));
  return std::llround((1 - w) * static_cast<double>(models_[k].offset_ns) +
                      w * static_cast<double>(models_[k + 1].offset_ns));
}

int64_t ClockTimeline::UncertaintyAt(int64_t t) const {
  if (models_.empty()) return 0;
  double w;
  const size_t k = Locate(t, &w);
  double u = static_cast<double>(models_[k].uncertainty_ns);
  if (w > 0) u = (1 - w) * u + w * models_[k + 1].uncertainty_ns;
  return std::llround(u);
}

}  // namespace meridian
