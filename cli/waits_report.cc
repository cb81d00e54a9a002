#include "cli/waits_report.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/analysis_report.h"
#include "cli/filter_flags.h"
#include "common/json.h"

namespace meridian {

absl::StatusOr<v1::WaitsRequest> WaitsRequestOf(const CommandLine& line) {
  v1::WaitsRequest request;
  request.set_job(line.Get("job"));
  auto steps = ParseStepFlags(line);
  if (!steps.ok()) return steps.status();
  if (*steps) {
    request.set_first_step((*steps)->first);
    request.set_last_step((*steps)->second);
  }
  if (line.Has("ranks")) {
    auto ranks = ParseRanks(line.Get("ranks"));
    if (!ranks.ok()) return ranks.status();
    for (int32_t r : *ranks) request.add_ranks(r);
  }
  return request;
}

std::string WaitsText(const v1::WaitsReply& reply) {
  std::string out = absl::StrFormat(
      "Wait states of job %s (who waited, by pattern; caused by: the ranks "
      "whose activity it was, through chains of waits)\n%s",
      reply.job(), kRoundingLine);
  if (reply.patterns().empty()) {
    out += "No rank waited for another.\n";
  } else {
    out += absl::StrFormat("%-17s %5s %6s %12s %9s  %s\n", "pattern", "rank",
                           "step", "wait ms", "instances", "caused by");
    for (const v1::WaitPattern& p : reply.patterns()) {
      std::string causes;
      for (const v1::WaitCause& c : p.caused_by()) {
        absl::StrAppend(&causes, causes.empty() ? "" : ", ", "rank ", c.rank(),
                        " in ", c.doing(),
                        absl::StrFormat(" %.3f", Ms(c.ns())));
      }
      out += absl::StrFormat(
          "%-17s %5d %6s %12.3f %9d  %s\n", p.pattern(), p.rank(),
          p.has_step() ? absl::StrCat(p.step()) : std::string("all"),
          Ms(p.wait_ns()), p.instances(), causes);
    }
  }
  out +=
      "\nPer rank: waited, and the waiting it caused (short-term: by its own "
      "activity; long-term: through others' waits)\n";
  out += absl::StrFormat("%5s %12s %15s %14s\n", "rank", "waited ms",
                         "short-term ms", "long-term ms");
  for (const v1::RankWaitCost& r : reply.ranks()) {
    out +=
        absl::StrFormat("%5d %12.3f %15.3f %14.3f\n", r.rank(), Ms(r.wait_ns()),
                        Ms(r.short_term_ns()), Ms(r.long_term_ns()));
  }
  return out;
}

std::string WaitsJson(const v1::WaitsReply& reply) {
  std::string out = "{\"job\":";
  AppendJsonString(&out, reply.job());
  out += ",\"patterns\":[";
  for (int i = 0; i < reply.patterns_size(); ++i) {
    const v1::WaitPattern& p = reply.patterns(i);
    absl::StrAppend(&out, i ? "," : "", "{\"pattern\":");
    AppendJsonString(&out, p.pattern());
    absl::StrAppend(&out, ",\"rank\":", p.rank());
    if (p.has_step()) absl::StrAppend(&out, ",\"step\":", p.step());
    absl::StrAppend(&out, ",\"wait_ns\":", p.wait_ns(),
                    ",\"instances\":", p.instances(), ",\"caused_by\":[");
    for (int j = 0; j < p.caused_by_size(); ++j) {
      const v1::WaitCause& c = p.caused_by(j);
      absl::StrAppend(&out, j ? "," : "", "{\"rank\":", c.rank(), ",\"in\":");
      AppendJsonString(&out, c.doing());
      absl::StrAppend(&out, ",\"ns\":", c.ns(), "}");
    }
    out += "]}";
  }
  out += "],\"ranks\":[";
  for (int i = 0; i < reply.ranks_size(); ++i) {
    const v1::RankWaitCost& r = reply.ranks(i);
    absl::StrAppend(&out, i ? "," : "", "{\"rank\":", r.rank(),
                    ",\"wait_ns\":", r.wait_ns(),
                    ",\"short_term_ns\":", r.short_term_ns(),
                    ",\"long_term_ns\":", r.long_term_ns(), "}");
  }
  out += "]}\n";
  return out;
}

}  // namespace meridian
