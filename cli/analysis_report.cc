#include "cli/analysis_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json.h"
#include "query/ops/category.h"

namespace meridian {

double Ms(int64_t ns) { return static_cast<double>(ns) / 1e6; }

double Percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / whole : 0.0;
}

std::string PathBreakdownText(const v1::CriticalPathReply& path) {
  const std::pair<const char*, int64_t> parts[] = {
      {"compute", path.compute_ns()},
      {"communication", path.communication_ns()},
      {"waiting", path.waiting_ns()},
      {"set-up", path.setup_ns()},
      {"untraced", path.untraced_ns()}};
  std::string out;
  for (const auto& [name, ns] : parts) {
    absl::StrAppendFormat(&out, "%s%s %.3f ms (%.1f%%)",
                          name == parts[0].first ? "" : ", ", name, Ms(ns),
                          Percent(ns, path.dur_ns()));
  }
  return out;
}

namespace {

void AppendTotals(std::string* out, const v1::OpTotals& t) {
  absl::StrAppend(out, "{\"count\":", t.count(), ",\"dur_ns\":", t.dur_ns(),
                  ",\"bytes\":", t.bytes(), "}");
}

}  // namespace

std::string CriticalPathText(const v1::CriticalPathReply& path) {
  std::string out = absl::StrFormat(
      "Critical path of job %s, %s: %.3f ms\n%s\n", path.job(),
      path.has_step() ? absl::StrCat("step ", path.step()) : "whole job",
      Ms(path.dur_ns()), kRoundingLine);
  absl::StrAppendFormat(&out, "%10s %10s %5s  %-14s %-13s %s\n", "at(ms)",
                        "dur(ms)", "rank", "class", "category", "name");
  for (const v1::PathSegment& s : path.segments()) {
    std::string name = s.name().empty() ? "(untraced)" : s.name();
    if (s.has_peer()) absl::StrAppend(&name, " (from rank ", s.peer(), ")");
    absl::StrAppendFormat(&out, "%10.3f %10.3f %5d  %-14s %-13s %s [%s]\n",
                          Ms(s.start_ns() - path.start_ns()), Ms(s.dur_ns()),
                          s.rank(), TimeClassName(s.time_class()),
                          s.category() == v1::CATEGORY_UNSPECIFIED
                              ? "-"
                              : CategoryName(s.category()),
                          name, s.track());
  }
  absl::StrAppend(&out, "\nBreakdown: ", PathBreakdownText(path));
  absl::StrAppendFormat(
      &out, "\nExplained: %.1f%% of the %s is in traced spans.\n",
      100.0 * path.explained(), path.has_step() ? "step" : "job");
  out += "On the path per rank:";
  for (const v1::RankTime& r : path.ranks()) {
    absl::StrAppendFormat(&out, " rank %d %.3f ms;", r.rank(), Ms(r.dur_ns()));
  }
  if (!out.empty() && out.back() == ';') out.pop_back();
  out += "\n";
  if (path.chunks() > 0) {
    absl::StrAppendFormat(&out, "Read %d of the job's %d stored chunks.\n",
                          path.chunks_read(), path.chunks());
  }
  return out;
}

std::string CriticalPathJson(const v1::CriticalPathReply& path) {
  std::string out = "{\"job\":";
  AppendJsonString(&out, path.job());
  if (path.has_step()) absl::StrAppend(&out, ",\"step\":", path.step());
  absl::StrAppend(
      &out, ",\"start_ns\":", path.start_ns(), ",\"dur_ns\":", path.dur_ns(),
      ",\"compute_ns\":", path.compute_ns(),
      ",\"communication_ns\":", path.communication_ns(),
      ",\"waiting_ns\":", path.waiting_ns(), ",\"setup_ns\":", path.setup_ns(),
      ",\"untraced_ns\":", path.untraced_ns(), ",\"explained\":");
  AppendJsonDouble(&out, path.explained());
  out += ",\"segments\":[";
  for (int i = 0; i < path.segments_size(); ++i) {
    const v1::PathSegment& s = path.segments(i);
    absl::StrAppend(&out, i ? "," : "", "{\"rank\":", s.rank(), ",\"class\":\"",
                    TimeClassName(s.time_class()), "\",\"category\":\"",
                    s.category() == v1::CATEGORY_UNSPECIFIED
                        ? "none"
                        : CategoryName(s.category()),
                    "\",\"name\":");
    AppendJsonString(&out, s.name());
    out += ",\"track\":";
    AppendJsonString(&out, s.track());
    absl::StrAppend(&out, ",\"start_ns\":", s.start_ns(),
                    ",\"dur_ns\":", s.dur_ns());
    if (s.has_peer()) absl::StrAppend(&out, ",\"peer\":", s.peer());
    out += "}";
  }
  out += "],\"ranks\":[";
  for (int i = 0; i < path.ranks_size(); ++i) {
    absl::StrAppend(&out, i ? "," : "", "{\"rank\":", path.ranks(i).rank(),
                    ",\"dur_ns\":", path.ranks(i).dur_ns(), "}");
  }
  out += "]";
  if (path.chunks() > 0) {
    absl::StrAppend(&out, ",\"chunks_read\":", path.chunks_read(),
                    ",\"chunks\":", path.chunks());
  }
  out += "}\n";
  return out;
}

std::string StragglersText(const v1::StragglersReply& reply) {
  std::string out = absl::StrFormat(
      "Stragglers of job %s: %d collective instances, %d matched "
      "messages.\n%s%s\nRanks most waited on (ms):\n",
      reply.job(), reply.instances(), reply.messages(), kRoundingLine,
      reply.from_summaries()
          ? "(From its step summaries: the collectives and messages tagged "
            "with a step.)\n"
          : "");
  absl::StrAppendFormat(&out, "%6s %12s %12s %12s %8s %12s\n", "rank",
                        "others wait", "collective", "late sender", "#last",
                        "it waited");
  for (const v1::RankWait& r : reply.ranks()) {
    absl::StrAppendFormat(&out, "%6d %12.3f %12.3f %12.3f %8d %12.3f\n",
                          r.rank(), Ms(r.wait_ns()), Ms(r.collective_wait_ns()),
                          Ms(r.late_sender_wait_ns()), r.instances_last(),
                          Ms(r.waited_ns()));
  }
  absl::StrAppendFormat(&out,
                        "\nMost skewed collective instances (%d of %d, ms):\n",
                        reply.collectives_size(), reply.instances());
  absl::StrAppendFormat(&out, "%-24s %18s %8s %6s %6s %10s %6s %10s\n", "name",
                        "comm", "seq", "step", "ranks", "skew", "last", "wait");
  for (const v1::CollectiveInstance& c : reply.collectives()) {
    absl::StrAppendFormat(
        &out, "%-24s %18s %8d %6s %6d %10.3f %6s %10.3f\n", c.name(),
        absl::StrCat("0x", absl::Hex(c.comm())), c.seq(),
        c.has_step() ? absl::StrCat(c.step()) : "-", c.ranks(), Ms(c.skew_ns()),
        c.last_rank() >= 0 ? absl::StrCat(c.last_rank()) : "-",
        Ms(c.wait_ns()));
  }
  return out;
}

std::string StragglersJson(const v1::StragglersReply& reply) {
  std::string out = "{\"job\":";
  AppendJsonString(&out, reply.job());
  absl::StrAppend(&out, ",\"instances\":", reply.instances(),
                  ",\"messages\":", reply.messages(), ",\"from_summaries\":",
                  reply.from_summaries() ? "true" : "false", ",\"ranks\":[");
  for (int i = 0; i < reply.ranks_size(); ++i) {
    const v1::RankWait& r = reply.ranks(i);
    absl::StrAppend(&out, i ? "," : "", "{\"rank\":", r.rank(),
                    ",\"wait_ns\":", r.wait_ns(),
                    ",\"collective_wait_ns\":", r.collective_wait_ns(),
                    ",\"late_sender_wait_ns\":", r.late_sender_wait_ns(),
                    ",\"instances_last\":", r.instances_last(),
                    ",\"waited_ns\":", r.waited_ns(), "}");
  }
  out += "],\"collectives\":[";
  for (int i = 0; i < reply.collectives_size(); ++i) {
    const v1::CollectiveInstance& c = reply.collectives(i);
    absl::StrAppend(&out, i ? "," : "", "{\"name\":");
    AppendJsonString(&out, c.name());
    absl::StrAppend(&out, ",\"comm\":\"0x", absl::Hex(c.comm()),
                    "\",\"seq\":", c.seq());
    if (c.has_step()) absl::StrAppend(&out, ",\"step\":", c.step());
    absl::StrAppend(
        &out, ",\"ranks\":", c.ranks(), ",\"start_ns\":", c.start_ns(),
        ",\"skew_ns\":", c.skew_ns(), ",\"last_rank\":", c.last_rank(),
        ",\"wait_ns\":", c.wait_ns(), "}");
  }
  out += "]}\n";
  return out;
}

std::string StepsText(const v1::StepsReply& reply) {
  // Set-up (MPI_Init... inside a step) gets a column where a step has any.
  bool setup = false;
  for (const v1::StepSummary& s : reply.steps()) setup |= s.setup_ns() > 0;
  std::string out = absl::StrFormat(
      "Steps of job %s (compute, communication%s and overlap: means over "
      "the ranks; start: from the first step's)\n%s",
      reply.job(), setup ? ", set-up (MPI_Init, MPI_Finalize)" : "",
      kRoundingLine);
  absl::StrAppendFormat(&out, "%8s %10s %10s %8s %10s %10s %10s%s\n", "step",
                        "iter", "start", "slowest", "compute", "comm",
                        "overlap",
                        setup ? absl::StrFormat(" %10s", "set-up") : "");
  const int64_t origin = reply.steps_size() ? reply.steps(0).start_ns() : 0;
  for (const v1::StepSummary& s : reply.steps()) {
    absl::StrAppendFormat(
        &out, "%8d %10.3f %10.3f %8d %10.3f %10.3f %10.3f%s\n", s.step(),
        Ms(s.dur_ns()), Ms(s.start_ns() - origin), s.slowest_rank(),
        Ms(s.compute_ns()), Ms(s.communication_ns()), Ms(s.overlap_ns()),
        setup ? absl::StrFormat(" %10.3f", Ms(s.setup_ns())) : "");
  }
  out += "\nPer step and rank (ms):\n";
  absl::StrAppendFormat(&out, "%8s %6s %10s %10s %10s %10s%s\n", "step", "rank",
                        "iter", "compute", "comm", "overlap",
                        setup ? absl::StrFormat(" %10s", "set-up") : "");
  for (const v1::StepSummary& s : reply.steps()) {
    for (const v1::RankStep& r : s.ranks()) {
      absl::StrAppendFormat(
          &out, "%8d %6d %10.3f %10.3f %10.3f %10.3f%s\n", s.step(), r.rank(),
          Ms(r.dur_ns()), Ms(r.compute_ns()), Ms(r.communication_ns()),
          Ms(r.overlap_ns()),
          setup ? absl::StrFormat(" %10.3f", Ms(r.setup_ns())) : "");
    }
  }
  return out;
}

std::string StepsJson(const v1::StepsReply& reply) {
  std::string out = "{\"job\":";
  AppendJsonString(&out, reply.job());
  absl::StrAppend(
      &out, ",\"from_summaries\":", reply.from_summaries() ? "true" : "false",
      ",\"summarised\":", reply.summarised());
  out += ",\"steps\":[";
  for (int i = 0; i < reply.steps_size(); ++i) {
    const v1::StepSummary& s = reply.steps(i);
    absl::StrAppend(&out, i ? "," : "", "{\"step\":", s.step(),
                    ",\"start_ns\":", s.start_ns(), ",\"dur_ns\":", s.dur_ns(),
                    ",\"slowest_rank\":", s.slowest_rank(),
                    ",\"compute_ns\":", s.compute_ns(),
                    ",\"communication_ns\":", s.communication_ns(),
                    ",\"overlap_ns\":", s.overlap_ns(),
                    ",\"setup_ns\":", s.setup_ns(), ",\"ranks\":[");
    for (int j = 0; j < s.ranks_size(); ++j) {
      const v1::RankStep& r = s.ranks(j);
      absl::StrAppend(&out, j ? "," : "", "{\"rank\":", r.rank(),
                      ",\"start_ns\":", r.start_ns(),
                      ",\"dur_ns\":", r.dur_ns(),
                      ",\"compute_ns\":", r.compute_ns(),
                      ",\"communication_ns\":", r.communication_ns(),
                      ",\"overlap_ns\":", r.overlap_ns(),
                      ",\"setup_ns\":", r.setup_ns(), "}");
    }
    out += "]}";
  }
  out += "]}\n";
  return out;
}

namespace {

// A difference in ms to the µs, signed; one that rounds to 0 is "0.000"
// (never "-0.000").
std::string SignedMs(int64_t ns) {
  const std::string text = absl::StrFormat("%+.3f", Ms(ns));
  return text == "-0.000" || text == "+0.000" ? "0.000" : text;
}

}  // namespace

std::string CompareText(const v1::CompareReply& reply) {
  std::string out = absl::StrFormat(
      "A: %s\nB: %s\n(diff = B - A; time in ms, rounded to the µs; --json "
      "gives exact ns)\n\n",
      reply.a(), reply.b());
  absl::StrAppendFormat(
      &out, "%-28s %-12s %9s %9s %9s %12s %12s %12s %14s %14s %14s\n",
      "operation", "category", "count A", "count B", "diff", "time A", "time B",
      "diff", "bytes A", "bytes B", "diff");
  auto row = [&out](const std::string& name, const std::string& category,
                    const v1::OpTotals& a, const v1::OpTotals& b,
                    const v1::OpTotals& d) {
    absl::StrAppendFormat(
        &out, "%-28s %-12s %9d %9d %+9d %12.3f %12.3f %12s %14d %14d %+14d\n",
        name, category, a.count(), b.count(), d.count(), Ms(a.dur_ns()),
        Ms(b.dur_ns()), SignedMs(d.dur_ns()), a.bytes(), b.bytes(), d.bytes());
  };
  for (const v1::OpDiff& op : reply.ops()) {
    row(op.name(), std::string(CategoryName(op.category())), op.a(), op.b(),
        op.diff());
  }
  v1::OpTotals diff;
  diff.set_count(reply.total_b().count() - reply.total_a().count());
  diff.set_dur_ns(reply.total_b().dur_ns() - reply.total_a().dur_ns());
  diff.set_bytes(reply.total_b().bytes() - reply.total_a().bytes());
  row("(all operations)", "", reply.total_a(), reply.total_b(), diff);
  if (reply.ops_size() < reply.ops_total()) {
    absl::StrAppendFormat(&out, "(%d of %d operations shown)\n",
                          reply.ops_size(), reply.ops_total());
  }
  return out;
}

std::string CompareJson(const v1::CompareReply& reply) {
  std::string out = "{\"a\":";
  AppendJsonString(&out, reply.a());
  out += ",\"b\":";
  AppendJsonString(&out, reply.b());
  absl::StrAppend(&out, ",\"ops_total\":", reply.ops_total(),
                  ",\"total\":{\"a\":");
  AppendTotals(&out, reply.total_a());
  out += ",\"b\":";
  AppendTotals(&out, reply.total_b());
  out += "},\"ops\":[";
  for (int i = 0; i < reply.ops_size(); ++i) {
    const v1::OpDiff& op = reply.ops(i);
    absl::StrAppend(&out, i ? "," : "", "{\"category\":\"",
                    CategoryName(op.category()), "\",\"name\":");
    AppendJsonString(&out, op.name());
    out += ",\"a\":";
    AppendTotals(&out, op.a());
    out += ",\"b\":";
    AppendTotals(&out, op.b());
    out += ",\"diff\":";
    AppendTotals(&out, op.diff());
    out += "}";
  }
  out += "]}\n";
  return out;
}

}  // namespace meridian
