#include "cli/trace_report.h"

#include "absl/strings/str_cat.h"
#include "common/json.h"

namespace meridian {

uint32_t TracedProcesses(const v1::TraceReply& reply) {
  uint32_t processes = 0;
  for (const auto& node : reply.nodes()) processes += node.processes();
  return processes;
}

namespace {

// "1 node", "2 nodes".
std::string Count(uint32_t n, const char* one, const char* many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

}  // namespace

std::string TraceText(const std::string& job, uint32_t steps, uint32_t seconds,
                      const v1::TraceReply& reply) {
  uint32_t nodes = 0;
  for (const auto& node : reply.nodes()) nodes += node.processes() > 0;
  std::string out = absl::StrCat(
      "meridian trace: ", Count(TracedProcesses(reply), "process", "processes"),
      " of job ", job, " on ", Count(nodes, "node", "nodes"), " will record ",
      steps > 0
          ? absl::StrCat("the next ", Count(steps, "step", "steps"), "\n")
          : absl::StrCat("for ", Count(seconds, "second", "seconds"), "\n"));
  for (const auto& node : reply.nodes()) {
    if (node.processes() > 0) {
      absl::StrAppend(&out, "  ", node.node(), ": ",
                      Count(node.processes(), "process", "processes"), "\n");
    }
  }
  return out;
}

std::string TraceJson(const std::string& job, uint32_t steps, uint32_t seconds,
                      const v1::TraceReply& reply) {
  std::string out = "{\"job\":";
  AppendJsonString(&out, job);
  absl::StrAppend(&out, ",\"steps\":", steps, ",\"seconds\":", seconds,
                  ",\"processes\":", TracedProcesses(reply),
                  ",\"unanswered\":", reply.unanswered(), ",\"nodes\":[");
  for (int i = 0; i < reply.nodes_size(); ++i) {
    const auto& node = reply.nodes(i);
    absl::StrAppend(&out, i ? "," : "", "{\"node\":");
    AppendJsonString(&out, node.node());
    out += ",\"agent_id\":";
    AppendJsonString(&out, node.agent_id());
    absl::StrAppend(&out, ",\"processes\":", node.processes(), "}");
  }
  out += "]}\n";
  return out;
}

}  // namespace meridian
