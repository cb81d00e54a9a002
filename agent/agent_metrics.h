// AgentMetricFamilies: what `meridian-agent --metrics` serves
// (docs/operations.md), from a snapshot of the agent's state that its loop
// copies (NodeAgent::Publish), so that the endpoint's thread reads nothing
// the loop owns.
//
// Example: a snapshot with counters.spans_received 5 gives, among others,
// meridian_agent_spans_total{state="received"} 5.
#ifndef MERIDIAN_AGENT_AGENT_METRICS_H_
#define MERIDIAN_AGENT_AGENT_METRICS_H_

#include <cstdint>
#include <vector>

#include "abi/agent_protocol.h"
#include "prometheus/metric_family.h"

namespace meridian {

struct AgentSnapshot {
  AgentCounters counters;
  uint64_t spool_bytes = 0;
  uint64_t queued_batches = 0;
  uint64_t queued_spans = 0;
  uint64_t memory_batches = 0;
  uint64_t clients = 0;
  bool collector_unreachable = false;
  // Processes with invalid records (at most FlushReply::kInvalidProcesses).
  std::vector<InvalidProcess> invalid;
};

std::vector<prometheus::MetricFamily> AgentMetricFamilies(
    const AgentSnapshot& p);

}  // namespace meridian

#endif  // MERIDIAN_AGENT_AGENT_METRICS_H_
