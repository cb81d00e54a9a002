// SlowdownDetector: whether one series of per-step times (a rank's compute,
// or its communication) has become lastingly slower while the job runs,
// from which step, and by how much (docs/health.md, "Slowdowns").
//
// The test is a robust two-window one, then a CUSUM to place the change:
//   - the reference is the median of the samples before the last kRecent
//     (at most kHistory - kRecent of them, after the first kWarmup steps of
//     the series), and its spread 1.4826 x their MAD (a standard deviation
//     where the noise is normal, unmoved by outliers);
//   - the series is slower when the median of the last kRecent samples is
//     at least kRatio times the reference, and above it by more than
//     kSpreads spreads and kFloorNs: a short burst (fewer than kRecent / 2
//     slow steps), a change within the noise, or a few microseconds on a
//     fast step never count;
//   - the change began at the step after the minimum of the cumulative sum
//     of (sample - midpoint of reference and now) over the history: where
//     the series left the reference level for the new one;
//   - once found, the slowdown's step and baseline (the median before that
//     step) stay; `now` follows the last kRecent samples; it ends when their
//     median falls below kRecoverRatio times the baseline, and the history
//     then starts again from the recent samples.
// Why this test: step times are heavy-tailed (a page fault, a preempted
// rank, a collective's tail), so a mean-and-variance test (a plain CUSUM
// on the raw series) alarms on outliers; medians and the MAD ignore up to
// half of a window being odd, and the fixed ratio keeps a steady but
// small change (a few percent) from being reported as a fault.
//
// Cost: the test sorts its windows (about a microsecond); it runs only when
// at least half of the last kRecent samples are over kPrefilter times the
// reference as last computed (every kRecent samples), which a steady
// series almost never is: tens of nanoseconds a sample otherwise.
//
// Contract: Add() takes steps in increasing order (an older or repeated
// step is ignored) and values >= 0; memory is bounded (kHistory samples).
#ifndef MERIDIAN_QUERY_ANALYSIS_SLOWDOWN_DETECTOR_H_
#define MERIDIAN_QUERY_ANALYSIS_SLOWDOWN_DETECTOR_H_

#include <cstdint>
#include <deque>
#include <optional>

namespace meridian {

class SlowdownDetector {
 public:
  static constexpr int kWarmup = 5;
  static constexpr int kRecent = 16;
  static constexpr int kMinReference = 32;
  static constexpr int kHistory = 128;
  static constexpr double kRatio = 1.2;
  static constexpr double kRecoverRatio = 1.1;
  static constexpr double kSpreads = 5;
  static constexpr int64_t kFloorNs = 50000;  // 50 us
  static constexpr double kPrefilter = 1.1;   // < kRatio: a stale reference

  struct Slowdown {
    int64_t from_step = 0;
    double ratio = 0;  // now / baseline
    int64_t baseline_ns = 0;
    int64_t now_ns = 0;
  };

  void Add(int64_t step, int64_t ns);
  const std::optional<Slowdown>& slowdown() const { return slowdown_; }
  // The median of the last kRecent samples (fewer at first); 0 before any.
  int64_t recent_ns() const;

 private:
  struct Sample {
    int64_t step;
    int64_t ns;
  };
  void Detect();
  bool MayBeSlow();

  int64_t seen_ = 0;       // samples added, warm-up included
  int64_t reference_ = 0;  // the reference's median, every kRecent samples
  int since_reference_ = kRecent;
  std::deque<Sample> history_;
  std::optional<Slowdown> slowdown_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_SLOWDOWN_DETECTOR_H_
