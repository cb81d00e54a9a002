#include "cli/replay_command.h"

#include <cmath>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cli/analysis_report.h"
#include "cli/filter_flags.h"
#include "common/json.h"

namespace meridian {
namespace {

absl::Status Invalid(absl::string_view flag, absl::string_view text,
                     absl::string_view want) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, " \"", text, "\": ", want));
}

// "A=B" split at its last '='.
bool SplitPair(absl::string_view text, absl::string_view* a,
               absl::string_view* b) {
  const size_t eq = text.rfind('=');
  if (eq == absl::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return false;
  }
  *a = text.substr(0, eq);
  *b = text.substr(eq + 1);
  return true;
}

void AppendRanksJson(
    std::string* out,
    const google::protobuf::RepeatedPtrField<v1::ReplayRank>& ranks) {
  *out += "[";
  for (int i = 0; i < ranks.size(); ++i) {
    absl::StrAppend(out, i ? "," : "", "{\"rank\":", ranks[i].rank(),
                    ",\"measured_ns\":", ranks[i].measured_ns(),
                    ",\"predicted_ns\":", ranks[i].predicted_ns(), "}");
  }
  *out += "]";
}

std::string PathJson(const v1::CriticalPathReply& path) {
  std::string json = CriticalPathJson(path);
  if (!json.empty() && json.back() == '\n') json.pop_back();
  return json;
}

}  // namespace

absl::StatusOr<double> ParseBandwidth(absl::string_view text) {
  static constexpr struct {
    absl::string_view suffix;
    double bytes;
  } kUnits[] = {
      {"KiB/s", 1024.0}, {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0},
      {"Kbit/s", 125.0}, {"Mbit/s", 125e3},    {"Gbit/s", 125e6},
      {"Tbit/s", 125e9}, {"KB/s", 1e3},        {"MB/s", 1e6},
      {"GB/s", 1e9},     {"TB/s", 1e12},       {"B/s", 1.0},
  };
  double scale = 1;
  absl::string_view number = text;
  for (const auto& unit : kUnits) {
    if (absl::EndsWith(text, unit.suffix)) {
      scale = unit.bytes;
      number = text.substr(0, text.size() - unit.suffix.size());
      break;
    }
  }
  double value;
  if (!absl::SimpleAtod(number, &value) || !std::isfinite(value) ||
      value <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text,
                     "\" is not a bandwidth; write e.g. 12.5GB/s, 100Gbit/s, "
                     "800MiB/s (bare numbers are bytes per second)"));
  }
  return value * scale;
}

absl::StatusOr<v1::ReplayRequest> ReplayRequestOf(const CommandLine& line) {
  v1::ReplayRequest request;
  request.set_job(line.Get("job"));
  auto steps = ParseStepFlags(line);
  if (!steps.ok()) return steps.status();
  if (*steps) {
    request.set_first_step((*steps)->first);
    request.set_last_step((*steps)->second);
  }
  for (const std::string& text : line.GetAll("scale")) {
    absl::string_view pattern, factor_text;
    double factor;
    if (!SplitPair(text, &pattern, &factor_text) ||
        !absl::SimpleAtod(factor_text, &factor) || !std::isfinite(factor) ||
        factor < 0) {
      return Invalid("scale", text,
                     "write NAME_GLOB=F or CATEGORY=F, F a number >= 0 "
                     "(MPI_Allreduce=0.5, mpi=0)");
    }
    v1::ReplayScale* scale = request.add_scales();
    scale->set_pattern(std::string(pattern));
    scale->set_factor(factor);
  }
  for (const std::string& text : line.GetAll("rank-like")) {
    absl::string_view r, s;
    int32_t rank, like;
    if (!SplitPair(text, &r, &s) || !absl::SimpleAtoi(r, &rank) ||
        !absl::SimpleAtoi(s, &like) || rank < 0 || like < 0) {
      return Invalid("rank-like", text, "write R=S, two ranks (3=0)");
    }
    v1::RankLike* out = request.add_rank_like();
    out->set_rank(rank);
    out->set_like(like);
  }
  const bool model = line.Has("comm-model");
  if (!model && (line.Has("bandwidth") || line.Has("latency"))) {
    return absl::InvalidArgumentError(
        "--bandwidth and --latency go with --comm-model ring|tree");
  }
  if (model) {
    const std::string kind = line.Get("comm-model");
    if (kind != "ring" && kind != "tree") {
      return Invalid("comm-model", kind, "write ring or tree");
    }
    if (!line.Has("bandwidth")) {
      return absl::InvalidArgumentError(
          "--comm-model needs --bandwidth B (e.g. 12.5GB/s)");
    }
    auto bandwidth = ParseBandwidth(line.Get("bandwidth"));
    if (!bandwidth.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--bandwidth: ", bandwidth.status().message()));
    }
    int64_t latency = 0;
    if (line.Has("latency")) {
      auto ns = ParseDurationNs(line.Get("latency"));
      if (!ns.ok() || *ns < 0) {
        return Invalid("latency", line.Get("latency"),
                       "write a time >= 0, e.g. 5us, 1.5us, 800ns");
      }
      latency = *ns;
    }
    v1::ReplayCommModel* m = request.mutable_comm_model();
    m->set_algorithm(kind == "ring" ? v1::COMM_ALGORITHM_RING
                                    : v1::COMM_ALGORITHM_TREE);
    m->set_bandwidth_bytes_per_s(*bandwidth);
    m->set_latency_ns(latency);
  }
  request.set_no_wait(line.Has("no-wait"));
  return request;
}

std::string ReplayText(const v1::ReplayReply& reply) {
  std::string window = "whole job";
  if (reply.has_first_step()) {
    window = reply.first_step() == reply.last_step()
                 ? absl::StrCat("step ", reply.first_step())
                 : absl::StrCat("steps ", reply.first_step(), "..",
                                reply.last_step());
  }
  std::string out = absl::StrFormat(
      "Replay of job %s, %s: measured %.3f ms, predicted %.3f ms: %s %.3f ms "
      "(%.1f%%)\n%s",
      reply.job(), window, Ms(reply.measured_ns()), Ms(reply.predicted_ns()),
      reply.saving_ns() >= 0 ? "saves" : "costs",
      Ms(std::llabs(reply.saving_ns())),
      100.0 * std::fabs(reply.saving_share()), kRoundingLine);
  absl::StrAppendFormat(&out,
                        "%d spans, %d matched by --scale; %d dependencies "
                        "of the replayed graph dropped to break cycles\n",
                        reply.spans(), reply.scaled_spans(),
                        reply.broken_dependencies());
  if (reply.steps_size() > 0) {
    out += "\nPer step and rank (ms):\n";
    absl::StrAppendFormat(&out, "%8s %6s %12s %12s %8s\n", "step", "rank",
                          "measured", "predicted", "saving");
    for (const v1::ReplayStep& s : reply.steps()) {
      absl::StrAppendFormat(
          &out, "%8d %6s %12.3f %12.3f %7.1f%%\n", s.step(), "all",
          Ms(s.measured_ns()), Ms(s.predicted_ns()),
          Percent(s.measured_ns() - s.predicted_ns(), s.measured_ns()));
      for (const v1::ReplayRank& r : s.ranks()) {
        absl::StrAppendFormat(
            &out, "%8d %6d %12.3f %12.3f %7.1f%%\n", s.step(), r.rank(),
            Ms(r.measured_ns()), Ms(r.predicted_ns()),
            Percent(r.measured_ns() - r.predicted_ns(), r.measured_ns()));
      }
    }
  }
  if (reply.blocks() > 0) {
    absl::StrAppendFormat(
        &out,
        "\nReplayed %d blocks of steps one at a time, each from its measured "
        "start (the job is over the collector's memory budget): no critical "
        "paths; a range of steps (--steps A:B) that fits has them.\n",
        reply.blocks());
    return out;
  }
  absl::StrAppendFormat(&out, "\nCritical path, measured:  %.3f ms: %s\n",
                        Ms(reply.measured_path().dur_ns()),
                        PathBreakdownText(reply.measured_path()));
  absl::StrAppendFormat(&out, "Critical path, predicted: %.3f ms: %s\n",
                        Ms(reply.predicted_path().dur_ns()),
                        PathBreakdownText(reply.predicted_path()));
  out += "On the predicted path per rank:";
  for (const v1::RankTime& r : reply.predicted_path().ranks()) {
    absl::StrAppendFormat(&out, " rank %d %.3f ms;", r.rank(), Ms(r.dur_ns()));
  }
  if (out.back() == ';') out.pop_back();
  out += "\n";
  return out;
}

std::string ReplayJson(const v1::ReplayReply& reply) {
  std::string out = "{\"job\":";
  AppendJsonString(&out, reply.job());
  if (reply.has_first_step()) {
    absl::StrAppend(&out, ",\"first_step\":", reply.first_step(),
                    ",\"last_step\":", reply.last_step());
  }
  absl::StrAppend(&out, ",\"measured_ns\":", reply.measured_ns(),
                  ",\"predicted_ns\":", reply.predicted_ns(),
                  ",\"saving_ns\":", reply.saving_ns(), ",\"saving_share\":");
  AppendJsonDouble(&out, reply.saving_share());
  absl::StrAppend(&out, ",\"spans\":", reply.spans(),
                  ",\"scaled_spans\":", reply.scaled_spans(),
                  ",\"broken_dependencies\":", reply.broken_dependencies(),
                  ",\"steps\":[");
  for (int i = 0; i < reply.steps_size(); ++i) {
    const v1::ReplayStep& s = reply.steps(i);
    absl::StrAppend(&out, i ? "," : "", "{\"step\":", s.step(),
                    ",\"measured_ns\":", s.measured_ns(),
                    ",\"predicted_ns\":", s.predicted_ns(), ",\"ranks\":");
    AppendRanksJson(&out, s.ranks());
    out += "}";
  }
  out += "],\"ranks\":";
  AppendRanksJson(&out, reply.ranks());
  if (reply.blocks() > 0) {
    absl::StrAppend(&out, ",\"blocks\":", reply.blocks(), "}\n");
    return out;
  }
  absl::StrAppend(&out, ",\"measured_path\":", PathJson(reply.measured_path()),
                  ",\"predicted_path\":", PathJson(reply.predicted_path()),
                  "}\n");
  return out;
}

}  // namespace meridian
