#include "cli/clocks_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/json.h"

namespace meridian {

std::string ClocksText(const v1::ClocksReply& clocks) {
  std::string out = absl::StrFormat(
      "%-20s %-12s %6s %14s %11s %14s %14s\n", "node", "ranks", "models",
      "offset_us", "drift_ppm", "uncertainty_us", "correction_us");
  // Thousandths written exactly: ns as µs, ppb as ppm.
  for (const v1::NodeClock& n : clocks.nodes()) {
    absl::StrAppendFormat(
        &out, "%-20s %-12s %6d %14s %11s %14s %14s\n", n.node(),
        absl::StrJoin(n.ranks(), ","), n.models(), FixedPoint(n.offset_ns(), 3),
        FixedPoint(n.drift_ppb(), 3), FixedPoint(n.uncertainty_ns(), 3),
        FixedPoint(n.correction_ns(), 3));
  }
  absl::StrAppend(
      &out, "\ncausal constraints: ", clocks.constraints(),
      "; violated with the probe models alone: ", clocks.violations_before(),
      "; after refinement: ", clocks.violations_after());
  if (clocks.adjusted_spans() > 0) {
    absl::StrAppend(&out, " (an export moves the end of ",
                    clocks.adjusted_spans(), " spans to clear them)");
  }
  out += "\n";
  if (!clocks.note().empty())
    absl::StrAppend(&out, "note: ", clocks.note(), "\n");
  if (clocks.solved_ns() > 0) {
    absl::StrAppend(
        &out, "solved: ",
        absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                         absl::FromUnixNanos(clocks.solved_ns()),
                         absl::UTCTimeZone()),
        clocks.stored() ? " (read from the job's stored solution)" : "", "\n");
  }
  return out;
}

std::string ClocksJson(const v1::ClocksReply& clocks) {
  std::string out = "{\"nodes\":[";
  for (int i = 0; i < clocks.nodes_size(); ++i) {
    const v1::NodeClock& n = clocks.nodes(i);
    absl::StrAppend(&out, i ? "," : "", "{\"node\":");
    AppendJsonString(&out, n.node());
    absl::StrAppend(&out, ",\"ranks\":[", absl::StrJoin(n.ranks(), ","),
                    "],\"models\":", n.models(),
                    ",\"offset_ns\":", n.offset_ns(),
                    ",\"drift_ppb\":", n.drift_ppb(),
                    ",\"uncertainty_ns\":", n.uncertainty_ns(),
                    ",\"correction_ns\":", n.correction_ns(), "}");
  }
  absl::StrAppend(&out, "],\"constraints\":", clocks.constraints(),
                  ",\"violations_before\":", clocks.violations_before(),
                  ",\"violations_after\":", clocks.violations_after(),
                  ",\"adjusted_spans\":", clocks.adjusted_spans(),
                  ",\"refined\":", clocks.refined() ? "true" : "false",
                  ",\"solved_ns\":", clocks.solved_ns(),
                  ",\"stored\":", clocks.stored() ? "true" : "false",
                  ",\"note\":");
  AppendJsonString(&out, clocks.note());
  out += "}\n";
  return out;
}

}  // namespace meridian
