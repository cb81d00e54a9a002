#include "collector/node_counter_history.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

using Counters = NodeCounterHistory::Counters;

Counters Of(std::vector<std::pair<std::string, double>> values) {
  Counters c;
  for (const auto& [name, value] : values) {
    v1::NodeCounterValue* v = c.Add();
    v->set_name(name);
    v->set_value(value);
  }
  return c;
}

std::vector<std::string> Lines(
    const std::vector<v1::HealthCounterChange>& changes) {
  std::vector<std::string> lines;
  for (const v1::HealthCounterChange& c : changes) {
    lines.push_back(c.name() + " " + std::to_string(c.baseline()) + " -> " +
                    std::to_string(c.now()));
  }
  return lines;
}

const absl::Time t0 = absl::FromUnixSeconds(1000);

// Node "n" sampled once a second for 40 s; from second 20 its steal time
// is 30 % (was 0-1 %), its NIC receives 50 MB/s (was 100), its memory used
// moves by 100 MiB (under the 256 MiB floor) and its CPU busy share by 8
// points (under 10).
void Sample(NodeCounterHistory* h) {
  for (int s = 0; s < 40; ++s) {
    const bool late = s >= 20;
    h->Add("n",
           Of({{"cpu.busy_percent", late ? 98 : 90},
               {"cpu.steal_percent", late ? 30 : s % 2},
               {"mem.used_bytes", (late ? 1100.0 : 1000.0) * (1 << 20)},
               {"net.eth0.rx_bytes_per_s", late ? 100 : 5e7}}),
           int64_t{s} * 1000000000, t0 + absl::Seconds(s));
  }
}

TEST(NodeCounterHistoryTest, NamesWhatChangedTheLargestFirst) {
  NodeCounterHistory h;
  Sample(&h);
  EXPECT_EQ(Lines(h.Changed("n", t0 + absl::Seconds(20))),
            (std::vector<std::string>{
                "cpu.steal_percent 0.500000 -> 30.000000",
                "net.eth0.rx_bytes_per_s 50000000.000000 -> 100.000000"}));
  // Nothing of another node.
  EXPECT_TRUE(h.Changed("other", t0 + absl::Seconds(20)).empty());
  // Too few samples before: nothing to compare with.
  EXPECT_TRUE(h.Changed("n", t0 + absl::Seconds(3)).empty());
}

TEST(NodeCounterHistoryTest, ASampleResentIsKeptOnce) {
  NodeCounterHistory h;
  for (int s = 0; s < 10; ++s) {
    // Each sample sent three times (with each poll until the next).
    for (int again = 0; again < 3; ++again) {
      h.Add("n", Of({{"cpu.steal_percent", s < 5 ? 0 : 50}}),
            int64_t{s} * 1000000000,
            t0 + absl::Seconds(s) + absl::Milliseconds(300 * again));
    }
  }
  // Before second 3 (less the 2 s margin): samples 0 only; with the
  // resends counted it would have 3.
  EXPECT_TRUE(h.Changed("n", t0 + absl::Seconds(3)).empty());
  EXPECT_EQ(Lines(h.Changed("n", t0 + absl::Seconds(5))),
            (std::vector<std::string>{"cpu.steal_percent 0.000000 -> "
                                      "50.000000"}));
}

TEST(NodeCounterHistoryTest, RefusesHostileReports) {
  EXPECT_TRUE(NodeCounterHistory::Check(Of({{"gpu0.power_w", 300}})).ok());
  EXPECT_EQ(NodeCounterHistory::Check(Of({{"", 1}})).message(),
            "a node counter's name is not 1 to 64 bytes of [A-Za-z0-9_.:-]");
  EXPECT_FALSE(NodeCounterHistory::Check(Of({{"a b", 1}})).ok());
  EXPECT_FALSE(NodeCounterHistory::Check(Of({{std::string(65, 'a'), 1}})).ok());
  EXPECT_EQ(NodeCounterHistory::Check(
                Of({{"x", std::numeric_limits<double>::infinity()}}))
                .message(),
            "node counter x is not finite");
  EXPECT_FALSE(NodeCounterHistory::Check(Of({{"x", std::nan("")}})).ok());
  std::vector<std::pair<std::string, double>> many;
  for (int i = 0; i <= NodeCounterHistory::kMaxCounters; ++i) {
    many.emplace_back("c" + std::to_string(i), i);
  }
  EXPECT_EQ(NodeCounterHistory::Check(Of(many)).message(),
            "513 node counters, more than 512");
}

TEST(NodeCounterHistoryTest, BoundedPerNodeAndInAll) {
  NodeCounterHistory h;
  std::vector<std::pair<std::string, double>> many;
  for (int i = 0; i < NodeCounterHistory::kMaxCounters; ++i) {
    many.emplace_back("c" + std::to_string(i), i);
  }
  const Counters counters = Of(many);
  // Each node keeps kSamples samples of 512 values: the total bound is
  // reached after kMaxValues / (512 * 300) nodes (27); the next is refused.
  const int fits = static_cast<int>(NodeCounterHistory::kMaxValues /
                                    (512 * NodeCounterHistory::kSamples));
  for (int node = 0; node <= fits; ++node) {
    for (int s = 0; s < 400; ++s) {
      h.Add("n" + std::to_string(node), counters, s + 1, t0 + absl::Seconds(s));
    }
  }
  EXPECT_EQ(h.refused(), 400u - (NodeCounterHistory::kMaxValues -
                                 fits * 512 * NodeCounterHistory::kSamples) /
                                    512);
}

}  // namespace
}  // namespace meridian
