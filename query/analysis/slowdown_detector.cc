#include "query/analysis/slowdown_detector.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace meridian {
namespace {

int64_t Median(std::vector<int64_t> values) {
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  return values[mid];
}

}  // namespace

void SlowdownDetector::Add(int64_t step, int64_t ns) {
  if (!history_.empty() && step <= history_.back().step) return;
  if (++seen_ <= kWarmup) return;
  history_.push_back({step, ns});
  if (history_.size() > static_cast<size_t>(kHistory)) history_.pop_front();
  if (slowdown_) {
    slowdown_->now_ns = recent_ns();
    slowdown_->ratio = static_cast<double>(slowdown_->now_ns) /
                       static_cast<double>(slowdown_->baseline_ns);
    if (history_.size() >= static_cast<size_t>(kRecent) &&
        slowdown_->now_ns < kRecoverRatio * slowdown_->baseline_ns) {
      slowdown_.reset();  // recovered: a fresh reference from here
      history_.erase(history_.begin(), history_.end() - kRecent);
      since_reference_ = kRecent;
    }
    return;
  }
  if (MayBeSlow()) Detect();
}

int64_t SlowdownDetector::recent_ns() const {
  if (history_.empty()) return 0;
  std::vector<int64_t> recent;
  for (auto it = history_.end() - std::min<size_t>(kRecent, history_.size());
       it != history_.end(); ++it) {
    recent.push_back(it->ns);
  }
  return Median(std::move(recent));
}

bool SlowdownDetector::MayBeSlow() {
  const size_t n = history_.size();
  if (n < static_cast<size_t>(kMinReference + kRecent)) return false;
  if (++since_reference_ >= kRecent) {
    since_reference_ = 0;
    std::vector<int64_t> reference;
    for (size_t i = 0; i < n - kRecent; ++i) {
      reference.push_back(history_[i].ns);
    }
    reference_ = Median(std::move(reference));
  }
  const double over = kPrefilter * static_cast<double>(reference_);
  int slow = 0;
  for (size_t i = n - kRecent; i < n; ++i) {
    slow += static_cast<double>(history_[i].ns) >= over;
  }
  return 2 * slow >= kRecent;
}

void SlowdownDetector::Detect() {
  const size_t n = history_.size();
  if (n < static_cast<size_t>(kMinReference + kRecent)) return;
  std::vector<int64_t> reference, recent;
  for (size_t i = 0; i < n; ++i) {
    (i < n - kRecent ? reference : recent).push_back(history_[i].ns);
  }
  const int64_t base = Median(reference);
  const int64_t now = Median(recent);
  std::vector<int64_t> deviations;
  for (int64_t v : reference) deviations.push_back(std::llabs(v - base));
  const double spread = 1.4826 * static_cast<double>(Median(deviations));
  if (base <= 0 || now < kRatio * base ||
      static_cast<double>(now - base) <=
          std::max(kSpreads * spread, double(kFloorNs))) {
    return;
  }
  // The change point: after the minimum of the cumulative sum.
  const double mid = 0.5 * static_cast<double>(base + now);
  double sum = 0, lowest = 0;
  size_t from = 0;
  for (size_t i = 0; i < n; ++i) {
    sum += static_cast<double>(history_[i].ns) - mid;
    if (sum < lowest) {
      lowest = sum;
      from = i + 1;
    }
  }
  if (from >= n) return;  // only the last sample: wait for more
  std::vector<int64_t> before;
  for (size_t i = 0; i < from; ++i) before.push_back(history_[i].ns);
  Slowdown s;
  s.from_step = history_[from].step;
  s.baseline_ns = before.empty() ? base : Median(before);
  if (s.baseline_ns <= 0) return;
  s.now_ns = now;
  s.ratio = static_cast<double>(now) / static_cast<double>(s.baseline_ns);
  slowdown_ = s;
}

}  // namespace meridian
