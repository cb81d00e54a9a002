// ./bench/run.sh slowdown: what fail-slow detection costs the collector a
// rank's step (SlowdownDetector::Add, query/analysis/slowdown_detector.h),
// on steady series (the common case: its prefilter, a reference median
// every 16 steps) and on series that slow down 1.6x at every 400th step
// and recover 200 steps later (the full test runs while half of the recent
// window is slow). Prints each figure, then one JSON line.
//
//   ./bench/run.sh slowdown [--steps N]   (N steps a series, default 2M)
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "query/analysis/slowdown_detector.h"

namespace {

// +-3 % noise around `base`, the same every run.
int64_t Noisy(int64_t base, int64_t step) {
  const uint64_t h = static_cast<uint64_t>(step) * 0x9E3779B97F4A7C15ull;
  return base + static_cast<int64_t>(
                    base * 0.06 *
                    (static_cast<double>(h >> 11) / 9007199254740992.0 - 0.5));
}

// ns a step over `steps` steps of 64 series (ranks), `changing` or not.
double NsPerStep(int64_t steps, bool changing, int* found) {
  constexpr int kSeries = 64;
  meridian::SlowdownDetector series[kSeries];
  const auto start = std::chrono::steady_clock::now();
  for (int64_t step = 0; step < steps / kSeries; ++step) {
    const bool slow = changing && step % 400 >= 200;
    for (int r = 0; r < kSeries; ++r) {
      series[r].Add(step, Noisy(slow ? 3200000 : 2000000, step + r));
    }
    if (step % 400 == 399) {
      for (auto& s : series) *found += s.slowdown().has_value();
    }
  }
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  return static_cast<double>(ns) / static_cast<double>(steps);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t steps = 2000000;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      steps = atoll(argv[++i]);
    } else {
      fprintf(stderr, "usage: slowdown_bench [--steps N]\n");
      return 2;
    }
  }
  // Alternated, three rounds each: the medians are reported.
  double steady[3], changing[3];
  int found_steady = 0, found_changing = 0;
  for (int round = 0; round < 3; ++round) {
    steady[round] = NsPerStep(steps, false, &found_steady);
    changing[round] = NsPerStep(steps, true, &found_changing);
    printf("round %d: steady %.1f ns a step, changing %.1f ns a step\n",
           round + 1, steady[round], changing[round]);
  }
  auto median = [](double* v) {
    double a = v[0], b = v[1], c = v[2];
    return a > b ? (b > c ? b : (a > c ? c : a))
                 : (a > c ? a : (b > c ? c : b));
  };
  printf(
      "{\"bench\": \"slowdown\", \"steps\": %lld, \"steady_ns_per_step\": "
      "%.1f, \"changing_ns_per_step\": %.1f, \"false_alarms\": %d, "
      "\"found_while_slow\": %d}\n",
      static_cast<long long>(steps), median(steady), median(changing),
      found_steady, found_changing);
  return found_steady == 0 ? 0 : 1;
}
