#include "query/health_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/json.h"

namespace meridian {
namespace {

void AppendStrings(std::string* out,
                   const google::protobuf::RepeatedPtrField<std::string>& s) {
  out->push_back('[');
  for (int i = 0; i < s.size(); ++i) {
    if (i) out->push_back(',');
    AppendJsonString(out, s[i]);
  }
  out->push_back(']');
}

void AppendRank(std::string* out, const v1::HealthRank& r) {
  absl::StrAppend(out, "{\"rank\":", r.rank(), ",\"node\":");
  AppendJsonString(out, r.node());
  absl::StrAppend(out, ",\"pid\":", r.pid(), ",\"tid\":", r.tid(), ",\"in\":");
  AppendJsonString(out, r.in());
  out->append(",\"waits_for\":");
  AppendJsonString(out, r.waits_for());
  absl::StrAppend(out, ",\"in_for_ns\":", r.in_for_ns(), ",\"category\":");
  AppendJsonString(out, r.category());
  if (!r.category().empty()) {
    absl::StrAppend(out, ",\"comm\":\"0x", absl::Hex(r.comm()), "\"");
    if (r.has_seq()) absl::StrAppend(out, ",\"seq\":", r.seq());
    absl::StrAppend(out, ",\"bytes\":", r.bytes());
  }
  if (r.peer() >= 0) absl::StrAppend(out, ",\"peer\":", r.peer());
  if (r.tag() >= 0) absl::StrAppend(out, ",\"tag\":", r.tag());
  out->append(",\"phase\":");
  AppendJsonString(out, r.phase());
  absl::StrAppend(out, ",\"idle_ns\":", r.idle_ns(),
                  ",\"sampled_ago_ns\":", r.sampled_ago_ns(), ",\"stack\":");
  AppendStrings(out, r.stack());
  out->append(",\"python_stack\":");
  AppendStrings(out, r.python_stack());
  if (!r.stack_error().empty()) {
    out->append(",\"stack_error\":");
    AppendJsonString(out, r.stack_error());
  }
  out->push_back('}');
}

std::string Seconds(int64_t ns) {
  return absl::StrFormat("%.1f s", static_cast<double>(ns) / 1e9);
}

std::string RankLine(const v1::HealthRank& r) {
  std::string in = r.in().empty() ? "in no traced call or phase"
                                  : absl::StrCat("in ", r.in());
  if (!r.waits_for().empty()) absl::StrAppend(&in, " for ", r.waits_for());
  std::string what;
  if (!r.category().empty()) {
    if (r.has_seq()) absl::StrAppend(&what, " #", r.seq());
    if (r.peer() >= 0) absl::StrAppend(&what, " peer/root ", r.peer());
    if (r.bytes() > 0) absl::StrAppend(&what, " ", r.bytes(), " bytes");
  }
  std::string line =
      absl::StrFormat("  rank %d (%s pid %d): %s%s for %s", r.rank(), r.node(),
                      r.pid(), in, what, Seconds(r.in_for_ns()));
  if (!r.phase().empty() && r.phase() != r.in()) {
    absl::StrAppend(&line, ", in phase ", r.phase());
  }
  line.push_back('\n');
  for (const std::string& frame : r.python_stack()) {
    absl::StrAppend(&line, "      py ", frame, "\n");
  }
  for (const std::string& frame : r.stack()) {
    absl::StrAppend(&line, "      ", frame, "\n");
  }
  if (!r.stack_error().empty()) {
    absl::StrAppend(&line, "      (no stack: ", r.stack_error(), ")\n");
  }
  return line;
}

}  // namespace

std::string HealthJson(const v1::HealthReply& reply) {
  std::string out = "{\"job\":";
  AppendJsonString(&out, reply.job());
  out.append(",\"state\":");
  AppendJsonString(&out, reply.state());
  absl::StrAppend(&out, ",\"stalled_for_ns\":", reply.stalled_for_ns(),
                  ",\"stall_after_ns\":", reply.stall_after_ns(),
                  ",\"stalls\":[");
  for (int i = 0; i < reply.stalls_size(); ++i) {
    const v1::HealthStall& s = reply.stalls(i);
    out.append(i ? ",{\"kind\":" : "{\"kind\":");
    AppendJsonString(&out, s.kind());
    absl::StrAppend(&out, ",\"comm\":\"0x", absl::Hex(s.comm()),
                    "\",\"seq\":", s.seq(), ",\"op\":");
    AppendJsonString(&out, s.op());
    absl::StrAppend(&out, ",\"waiting_ranks\":[",
                    absl::StrJoin(s.waiting_ranks(), ","),
                    "],\"suspect_ranks\":[",
                    absl::StrJoin(s.suspect_ranks(), ","), "],\"ranks\":[");
    for (int j = 0; j < s.ranks_size(); ++j) {
      if (j) out.push_back(',');
      AppendRank(&out, s.ranks(j));
    }
    out.append("]}");
  }
  out.append("],\"ranks\":[");
  for (int i = 0; i < reply.ranks_size(); ++i) {
    if (i) out.push_back(',');
    AppendRank(&out, reply.ranks(i));
  }
  out.append("],\"slowdowns\":[");
  for (int i = 0; i < reply.slowdowns_size(); ++i) {
    const v1::HealthSlowdown& s = reply.slowdowns(i);
    absl::StrAppend(&out, i ? "," : "", "{\"rank\":", s.rank(), ",\"node\":");
    AppendJsonString(&out, s.node());
    out.append(",\"metric\":");
    AppendJsonString(&out, s.metric());
    absl::StrAppend(&out, ",\"from_step\":", s.from_step(),
                    ",\"ratio\":", absl::StrFormat("%.3f", s.ratio()),
                    ",\"baseline_ns\":", s.baseline_ns(),
                    ",\"now_ns\":", s.now_ns());
    if (s.peer() >= 0) absl::StrAppend(&out, ",\"peer\":", s.peer());
    out.append(",\"counters\":[");
    for (int j = 0; j < s.counters_size(); ++j) {
      const v1::HealthCounterChange& c = s.counters(j);
      out.append(j ? ",{\"name\":" : "{\"name\":");
      AppendJsonString(&out, c.name());
      absl::StrAppend(&out,
                      ",\"baseline\":", absl::StrFormat("%.6g", c.baseline()),
                      ",\"now\":", absl::StrFormat("%.6g", c.now()), "}");
    }
    out.append("]}");
  }
  out.append("]}\n");
  return out;
}

std::string HealthText(const v1::HealthReply& reply) {
  std::string out = absl::StrCat("Job ", reply.job(), ": ", reply.state());
  if (reply.state() == "stalled") {
    absl::StrAppend(&out, ": no rank has left a traced call for ",
                    Seconds(reply.stalled_for_ns()), " (threshold ",
                    Seconds(reply.stall_after_ns()), ")");
  }
  out.push_back('\n');
  for (const v1::HealthStall& s : reply.stalls()) {
    if (s.kind() == "p2p") {
      absl::StrAppend(&out, "\nPoint-to-point wait in ", s.op(),
                      " with no matching call: ranks ",
                      absl::StrJoin(s.waiting_ranks(), ", "), " wait on ",
                      absl::StrJoin(s.suspect_ranks(), ", "), "\n");
    } else {
      absl::StrAppend(
          &out, "\n", s.kind() == "mismatch" ? "Mismatch" : "Missing ranks",
          " at collective #", s.seq(), " of communicator 0x",
          absl::Hex(s.comm()), ": ranks ",
          absl::StrJoin(s.waiting_ranks(), ", "), " wait in ", s.op(),
          "; suspect: ", absl::StrJoin(s.suspect_ranks(), ", "), "\n");
    }
    for (const v1::HealthRank& r : s.ranks()) out += RankLine(r);
  }
  if (reply.slowdowns_size() > 0) out += "\nSlower than before:\n";
  for (const v1::HealthSlowdown& s : reply.slowdowns()) {
    if (s.metric() == "link") {
      absl::StrAppendFormat(&out,
                            "  link rank %d (%s) - rank %d: %.2fx from step "
                            "%d (%.3f ms a MiB, was %.3f)\n",
                            s.rank(), s.node(), s.peer(), s.ratio(),
                            s.from_step(),
                            static_cast<double>(s.now_ns()) / 1e6,
                            static_cast<double>(s.baseline_ns()) / 1e6);
    } else {
      absl::StrAppendFormat(
          &out,
          "  rank %d (%s): %s %.2fx from step %d (%.3f ms a step, was "
          "%.3f)\n",
          s.rank(), s.node(), s.metric(), s.ratio(), s.from_step(),
          static_cast<double>(s.now_ns()) / 1e6,
          static_cast<double>(s.baseline_ns()) / 1e6);
    }
    for (const v1::HealthCounterChange& c : s.counters()) {
      absl::StrAppendFormat(&out, "    with %s: %.6g, was %.6g\n", c.name(),
                            c.now(), c.baseline());
    }
  }
  if (reply.state() != "finished" && reply.ranks_size() > 0) {
    out += "\nEvery rank, as last sampled:\n";
    for (const v1::HealthRank& r : reply.ranks()) out += RankLine(r);
  }
  return out;
}

}  // namespace meridian
