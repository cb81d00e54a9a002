#include "agent/agent_metrics.h"

#include <cstring>
#include <string>

#include "net/metrics_endpoint.h"

namespace meridian {
namespace {

// meridian_agent_invalid_records{pid, job}: the processes of
// the snapshot's `invalid` (at most FlushReply::kInvalidProcesses, so the
// series stay few whatever runs on the node).
prometheus::MetricFamily InvalidFamily(
    const std::vector<InvalidProcess>& processes) {
  prometheus::MetricFamily family = GaugeFamily(
      "meridian_agent_invalid_records",
      "Records dropped as invalid, by process: the running ones and the "
      "latest that ended (at most 8).",
      0);
  family.metric.clear();
  for (const InvalidProcess& p : processes) {
    prometheus::ClientMetric metric;
    metric.label.push_back({"pid", std::to_string(p.pid)});
    metric.label.push_back(
        {"job", std::string(p.job, strnlen(p.job, sizeof(p.job)))});
    metric.gauge.value = static_cast<double>(p.records);
    family.metric.push_back(metric);
  }
  return family;
}

}  // namespace

std::vector<prometheus::MetricFamily> AgentMetricFamilies(
    const AgentSnapshot& p) {
  const AgentCounters& c = p.counters;
  const auto d = [](uint64_t v) { return static_cast<double>(v); };
  return {
      CounterFamily("meridian_agent_processes_total",
                    "Traced processes registered.", d(c.processes)),
      LabeledFamily("meridian_agent_spans_total",
                    "Spans by what became of them: received (read from the "
                    "rings), sent (acknowledged), dropped (full rings, "
                    "threads beyond 64, full spool, lost spool files), "
                    "rejected (their batch refused), invalid (dropped one "
                    "by one).",
                    true, "state",
                    {{"received", d(c.spans_received)},
                     {"sent", d(c.spans_sent)},
                     {"dropped", d(c.spans_dropped)},
                     {"rejected", d(c.spans_rejected)},
                     {"invalid", d(c.spans_invalid)}}),
      GaugeFamily("meridian_agent_spooled_spans",
                  "Spans on disk, not yet acknowledged.", d(c.spans_spooled)),
      GaugeFamily("meridian_agent_spool_bytes", "Bytes in the spool.",
                  d(p.spool_bytes)),
      CounterFamily("meridian_agent_spool_writes_total",
                    "Batches written to the spool.", d(c.spool_writes)),
      CounterFamily("meridian_agent_spool_corrupt_files",
                    "Spool files found damaged and set aside.",
                    d(c.spool_corrupt)),
      LabeledFamily("meridian_agent_send_queue",
                    "The sender's queue: batches, spans, and batches in "
                    "memory only.",
                    false, "what",
                    {{"batches", d(p.queued_batches)},
                     {"spans", d(p.queued_spans)},
                     {"memory_batches", d(p.memory_batches)}}),
      GaugeFamily("meridian_agent_collector_unreachable",
                  "1 if the last round of sending failed.",
                  p.collector_unreachable ? 1 : 0),
      GaugeFamily("meridian_agent_connections", "Connections served now.",
                  d(p.clients)),
      CounterFamily("meridian_agent_connections_refused_total",
                    "Connections closed unserved.", d(c.connections_refused)),
      CounterFamily("meridian_agent_released_before_ack_total",
                    "Records whose ring slots were released before the "
                    "collector's acknowledgement (their ring over half full).",
                    d(c.released_early)),
      InvalidFamily(p.invalid),
  };
}

}  // namespace meridian
