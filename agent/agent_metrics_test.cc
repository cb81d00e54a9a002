#include "agent/agent_metrics.h"

#include <cstring>
#include <string>

#include "gtest/gtest.h"

namespace meridian {
namespace {

const prometheus::MetricFamily* Find(
    const std::vector<prometheus::MetricFamily>& families,
    const std::string& name) {
  for (const prometheus::MetricFamily& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

TEST(AgentMetricsTest, ServesTheSnapshotsCountersAndInvalidProcesses) {
  AgentSnapshot snapshot;
  snapshot.counters.spans_received = 5;
  snapshot.counters.spans_dropped = 2;
  snapshot.counters.released_early = 7;
  snapshot.clients = 3;
  InvalidProcess invalid;
  invalid.pid = 42;
  invalid.records = 9;
  strncpy(invalid.job, "train", sizeof(invalid.job) - 1);
  snapshot.invalid.push_back(invalid);
  const auto families = AgentMetricFamilies(snapshot);

  const prometheus::MetricFamily* spans =
      Find(families, "meridian_agent_spans_total");
  ASSERT_NE(spans, nullptr);
  ASSERT_EQ(spans->metric.size(), 5u);
  EXPECT_EQ(spans->metric[0].label[0].value, "received");
  EXPECT_EQ(spans->metric[0].counter.value, 5);
  EXPECT_EQ(spans->metric[2].label[0].value, "dropped");
  EXPECT_EQ(spans->metric[2].counter.value, 2);
  const prometheus::MetricFamily* released =
      Find(families, "meridian_agent_released_before_ack_total");
  ASSERT_NE(released, nullptr);
  EXPECT_EQ(released->metric[0].counter.value, 7);
  const prometheus::MetricFamily* clients =
      Find(families, "meridian_agent_connections");
  ASSERT_NE(clients, nullptr);
  EXPECT_EQ(clients->metric[0].gauge.value, 3);
  const prometheus::MetricFamily* by_process =
      Find(families, "meridian_agent_invalid_records");
  ASSERT_NE(by_process, nullptr);
  ASSERT_EQ(by_process->metric.size(), 1u);
  EXPECT_EQ(by_process->metric[0].label[0].value, "42");
  EXPECT_EQ(by_process->metric[0].label[1].value, "train");
  EXPECT_EQ(by_process->metric[0].gauge.value, 9);
}

}  // namespace
}  // namespace meridian
