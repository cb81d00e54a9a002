#include "cli/jobs_report.h"

#include <time.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json.h"

namespace meridian {
namespace {

std::string Utc(int64_t ns) {
  time_t seconds = ns / 1000000000;
  struct tm tm;
  gmtime_r(&seconds, &tm);
  char buf[32];
  strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return absl::StrFormat("%s.%09dZ", buf, ns % 1000000000);
}

std::string Ranks(const v1::JobSummary& job) {
  return job.world_size() > 0 ? absl::StrCat(job.ranks(), "/", job.world_size())
                              : absl::StrCat(job.ranks());
}

std::string Incomplete(const v1::JobSummary& job) {
  if (!job.incomplete()) return "";
  if (job.world_size() <= 0) return "  incomplete";
  return absl::StrCat("  incomplete: ", job.ranks(), " of ", job.world_size(),
                      " ranks seen");
}

// Spans its probes dropped (full rings): missing from its timeline.
std::string Dropped(const v1::JobSummary& job) {
  if (job.spans_dropped() <= 0) return "";
  return absl::StrCat("  ", job.spans_dropped(),
                      " spans dropped (full rings: missing from the timeline)");
}

// A stalled job says so, and where to look.
std::string Stalled(const v1::JobSummary& job) {
  if (job.health() != "stalled") return "";
  return absl::StrCat("  stalled (meridian health --job ", job.job(), ")");
}

}  // namespace

std::string JobsText(const v1::ListJobsReply& reply) {
  if (reply.jobs_size() == 0) return "no jobs stored yet\n";
  // The name column as wide as the widest name (24 at least): a long name
  // moves the columns, never breaks them.
  int width = 24;
  for (const v1::JobSummary& job : reply.jobs()) {
    width = std::max(width, static_cast<int>(job.job().size()));
  }
  std::string out =
      absl::StrFormat("%-*s %6s %6s %12s  %-30s %15s\n", width, "JOB", "RANKS",
                      "NODES", "SPANS", "START (UTC)", "DURATION(s)");
  for (const v1::JobSummary& job : reply.jobs()) {
    absl::StrAppendFormat(&out, "%-*s %6s %6d %12d  %-30s %15s%s%s%s\n", width,
                          job.job(), Ranks(job), job.nodes(), job.spans(),
                          job.spans() > 0 ? Utc(job.start_ns()) : "-",
                          FixedPoint(job.end_ns() - job.start_ns(), 9),
                          Stalled(job), Incomplete(job), Dropped(job));
  }
  return out;
}

std::string JobsJson(const v1::ListJobsReply& reply) {
  std::string out = "{\"jobs\":[";
  for (int i = 0; i < reply.jobs_size(); ++i) {
    const v1::JobSummary& job = reply.jobs(i);
    absl::StrAppend(&out, i ? "," : "", "{\"job\":");
    AppendJsonString(&out, job.job());
    absl::StrAppend(&out, ",\"ranks_seen\":", job.ranks(),
                    ",\"world_size\":", job.world_size(),
                    ",\"incomplete\":", job.incomplete() ? "true" : "false",
                    ",\"nodes\":", job.nodes(), ",\"spans\":", job.spans(),
                    ",\"spans_dropped\":", job.spans_dropped(),
                    ",\"start_ns\":", job.start_ns(),
                    ",\"end_ns\":", job.end_ns(), ",\"health\":");
    AppendJsonString(&out, job.health());
    out += "}";
  }
  out += "]}\n";
  return out;
}

}  // namespace meridian
