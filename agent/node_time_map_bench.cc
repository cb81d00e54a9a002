// node_time_map_bench: how far NodeTimeMap strays from the node's clock on
// this machine, and what a conversion costs (docs/clocks.md).
//
//   node_time_map_bench [--seconds 60] [--drain-ms 20] [--drift-ppm 0]
//
// Updates the map every --drain-ms, as the agent's drains do, against
// CLOCK_REALTIME 20 ms ahead and --drift-ppm fast (the agent's skew
// options). Halfway between updates, where records fall, it reads the
// clocks again (the same sampler) and compares the map's time for the
// sample's ticks and for its CLOCK_MONOTONIC with the node clock read with
// them; the first 5 s (convergence of the first rates) are left out. The
// comparison's own pairing error is up to half the sample's width, which
// is printed too. The last line is one JSON object with the figures.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "agent/clock_sync.h"
#include "agent/node_time_map.h"
#include "common/command_line.h"

namespace meridian {
namespace {

int64_t Quantile(std::vector<int64_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
}

int Main(int argc, char** argv) {
  auto flags = CommandLine::Parse(std::vector<std::string>(argv, argv + argc),
                                  1, {"seconds", "drain-ms", "drift-ppm"}, {});
  if (!flags.ok()) {
    fprintf(stderr, "%s\n", std::string(flags.status().message()).c_str());
    return 2;
  }
  const int64_t seconds = flags->GetInt("seconds", 60).value_or(60);
  const int64_t drain_ms = flags->GetInt("drain-ms", 20).value_or(20);
  ClockSkew skew;
  skew.offset_ns = 20000000;
  skew.drift_ppm = std::stod(flags->Get("drift-ppm", "0"));
  skew.origin_ns = WallNs();
  auto node_clock = [skew] { return skew.Apply(WallNs()); };

  NodeTimeMap time(NodeTimeMap::Sampler(node_clock));
  auto sample = NodeTimeMap::Sampler(node_clock);
  std::vector<int64_t> ticks_error, monotonic_error, widths;
  const auto start = std::chrono::steady_clock::now();
  const int64_t steps = seconds * 1000 / std::max<int64_t>(drain_ms / 2, 1);
  for (int64_t i = 0; i < steps; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(drain_ms / 2));
    if (i % 2 == 0) {
      time.Update();
      continue;
    }
    const TimeSample s = sample();
    widths.push_back(s.width_ns);
    if (std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
      continue;
    }
    ticks_error.push_back(std::abs(time.ToWallNs(s.ticks, true) - s.wall_ns));
    monotonic_error.push_back(
        std::abs(time.ToWallNs(s.monotonic_ns, false) - s.wall_ns));
  }

  // The cost of a conversion, as ProbeSession::Read pays it per record end.
  const TimeSample now = sample();
  constexpr int kConversions = 10000000;
  int64_t sink = 0;
  const auto timed = std::chrono::steady_clock::now();
  for (int i = 0; i < kConversions; ++i) {
    sink += time.ToWallNs(now.ticks - i, true);
  }
  const double ns_per_conversion = std::chrono::duration<double, std::nano>(
                                       std::chrono::steady_clock::now() - timed)
                                       .count() /
                                   kConversions;

  printf("error vs node clock, ticks:     p50 %ld ns, p99 %ld ns, max %ld ns\n",
         Quantile(ticks_error, 0.5), Quantile(ticks_error, 0.99),
         Quantile(ticks_error, 1));
  printf("error vs node clock, monotonic: p50 %ld ns, p99 %ld ns, max %ld ns\n",
         Quantile(monotonic_error, 0.5), Quantile(monotonic_error, 0.99),
         Quantile(monotonic_error, 1));
  printf("sample width: p50 %ld ns, max %ld ns; %lu samples ignored\n",
         Quantile(widths, 0.5), Quantile(widths, 1), time.samples_ignored());
  printf("%.1f ns per conversion (%ld)\n", ns_per_conversion, sink & 1);
  printf(
      "{\"ticks_p99_ns\": %ld, \"ticks_max_ns\": %ld, \"monotonic_p99_ns\": "
      "%ld, \"monotonic_max_ns\": %ld, \"width_p50_ns\": %ld, "
      "\"ns_per_conversion\": %.1f, \"breakpoints\": %zu}\n",
      Quantile(ticks_error, 0.99), Quantile(ticks_error, 1),
      Quantile(monotonic_error, 0.99), Quantile(monotonic_error, 1),
      Quantile(widths, 0.5), ns_per_conversion, time.wall_map().breakpoints());
  return 0;
}

}  // namespace
}  // namespace meridian

int main(int argc, char** argv) { return meridian::Main(argc, argv); }
