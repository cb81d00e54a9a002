#include "cli/stats_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json.h"
#include "query/ops/category.h"

namespace meridian {
namespace {

double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

double AvgBytes(int64_t bytes, int64_t calls) {
  return calls > 0 ? static_cast<double>(bytes) / calls : 0.0;
}

// mpitrace's "MBytes": ru_maxrss (KiB) / 1024, so MiB.
double MiB(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// Seconds to the µs, or "-" for a time not known (0).
std::string SecondsOrDash(int64_t ns) {
  return ns == 0 ? std::string("-") : absl::StrFormat("%.6f", Seconds(ns));
}

// mpitrace's lines naming the ranks with the largest memory and elapsed
// time (MPI_Init to MPI_Finalize; the lower rank among equals); each only
// when some rank has the figure.
std::string LargestLines(const v1::StatsReply& stats) {
  const v1::RankStats* memory = nullptr;
  const v1::RankStats* elapsed = nullptr;
  for (const v1::RankStats& r : stats.ranks()) {
    if (memory == nullptr || r.max_rss_bytes() > memory->max_rss_bytes()) {
      memory = &r;
    }
    if (elapsed == nullptr || r.mpi_elapsed_ns() > elapsed->mpi_elapsed_ns()) {
      elapsed = &r;
    }
  }
  std::string out;
  if (memory != nullptr && memory->max_rss_bytes() > 0) {
    absl::StrAppendFormat(
        &out, "Rank %d reported the largest memory utilization : %.2f MBytes\n",
        memory->rank(), MiB(memory->max_rss_bytes()));
  }
  if (elapsed != nullptr && elapsed->mpi_elapsed_ns() > 0) {
    absl::StrAppendFormat(&out,
                          "Rank %d reported the largest elapsed time : %.2f "
                          "sec\n",
                          elapsed->rank(), Seconds(elapsed->mpi_elapsed_ns()));
  }
  return out;
}

void AppendOpsJson(const google::protobuf::RepeatedPtrField<v1::OpStats>& ops,
                   std::string* out) {
  for (int i = 0; i < ops.size(); ++i) {
    const v1::OpStats& op = ops.Get(i);
    absl::StrAppend(out, i ? "," : "", "{\"name\":");
    AppendJsonString(out, op.name());
    absl::StrAppend(out, ",\"category\":\"", CategoryName(op.category()),
                    "\",\"calls\":", op.calls(), ",\"bytes\":", op.bytes(),
                    ",\"dur_ns\":", op.dur_ns(), ",\"buckets\":[");
    for (int j = 0; j < op.buckets_size(); ++j) {
      const v1::SizeBucket& b = op.buckets(j);
      absl::StrAppend(out, j ? "," : "", "{\"log2\":", b.log2(),
                      ",\"calls\":", b.calls(), ",\"bytes\":", b.bytes(),
                      ",\"dur_ns\":", b.dur_ns(), "}");
    }
    *out += "]}";
  }
}

void AppendCallsitesJson(
    const google::protobuf::RepeatedPtrField<v1::CallsiteStats>& callsites,
    std::string* out) {
  for (int i = 0; i < callsites.size(); ++i) {
    const v1::CallsiteStats& c = callsites.Get(i);
    absl::StrAppend(out, i ? "," : "", "{\"name\":");
    AppendJsonString(out, c.name());
    absl::StrAppend(out, ",\"category\":\"", CategoryName(c.category()),
                    "\",\"callsite\":");
    AppendJsonString(out, c.callsite());
    absl::StrAppend(out, ",\"calls\":", c.calls(), ",\"bytes\":", c.bytes(),
                    ",\"dur_ns\":", c.dur_ns(), "}");
  }
}

// The operations per call site, as the operations' table with the call
// site last (its width unbounded).
std::string CallsitesText(const v1::StatsReply& stats) {
  if (stats.callsites().empty()) {
    return "\nCall sites: none recorded; run the job with MERIDIAN_CALLSITES=1 "
           "to record them.\n";
  }
  std::string out = "\nCall sites:\n";
  absl::StrAppendFormat(&out, "%-28s %12s %16s %12s  %s\n", "Call", "#calls",
                        "avg. bytes", "time(sec)", "call site");
  for (const v1::CallsiteStats& c : stats.callsites()) {
    absl::StrAppendFormat(&out, "%-28s %12d %16.1f %12.6f  %s\n", c.name(),
                          c.calls(), AvgBytes(c.bytes(), c.calls()),
                          Seconds(c.dur_ns()), c.callsite());
  }
  return out;
}

std::string BucketLabel(int log2, bool mpitrace_bins) {
  if (log2 < 0) return "0";
  if (mpitrace_bins) {
    if (log2 <= 1) return "[1, 4]";
    return absl::StrCat("(", int64_t{1} << log2, ", ",
                        log2 >= 62 ? std::string("2^63")
                                   : absl::StrCat(int64_t{1} << (log2 + 1)),
                        "]");
  }
  return absl::StrCat(
      "[", int64_t{1} << log2, ", ",
      log2 >= 62 ? std::string("2^63") : absl::StrCat(int64_t{1} << (log2 + 1)),
      ")");
}

}  // namespace

std::string StatsText(const v1::StatsReply& stats, bool by_callsite) {
  std::string out = absl::StrFormat(
      "Job %s: %d ranks. Communication (MPI, NCCL, c10d) summed over all "
      "ranks.\n"
      "Time is time inside the calls (c10d: from the call to its work's end): "
      "a non-blocking call's completion time "
      "is counted in the MPI_Wait* (or MPI_Test*) that completes it.\n"
      "(Times in seconds, rounded to the µs, user and system time to the "
      "ms; average bytes to 0.1; size(MB) in MiB (2^20 bytes) to 0.001, in "
      "the lines naming the largest rank to 0.01. --json gives exact "
      "integers.)\n\n",
      stats.job(), stats.ranks_size());
  if (stats.spans_dropped() > 0) {
    // Holes in what follows: said before it.
    out += absl::StrCat(stats.spans_dropped(),
                        " spans were dropped by full rings and are missing "
                        "from these figures:");
    for (const v1::RankStats& r : stats.ranks()) {
      if (r.spans_dropped() > 0) {
        absl::StrAppend(&out, " rank ", r.rank(), " ", r.spans_dropped());
      }
    }
    out += ".\n\n";
  }
  if (stats.ops().empty()) {
    // Said, not left to an empty table: e.g. a PyTorch job over gloo, whose
    // torch.distributed collectives the probe does not capture.
    out +=
        "No communication (MPI or NCCL) in the selection. torch.distributed's "
        "own collectives (gloo, MPI or UCC backends) are not captured: "
        "docs/launchers.md.\n\n";
  }
  absl::StrAppendFormat(&out, "%-28s %12s %16s %12s\n", "Operation", "#calls",
                        "avg. bytes", "time(sec)");
  for (const v1::OpStats& op : stats.ops()) {
    absl::StrAppendFormat(&out, "%-28s %12d %16.1f %12.6f\n", op.name(),
                          op.calls(), AvgBytes(op.bytes(), op.calls()),
                          Seconds(op.dur_ns()));
  }
  if (by_callsite) out += CallsitesText(stats);
  out += "\nMessage size distributions:\n";
  for (const v1::OpStats& op : stats.ops()) {
    absl::StrAppendFormat(&out, "%-28s %12s %16s %12s\n", op.name(), "#calls",
                          "avg. bytes", "time(sec)");
    for (const v1::SizeBucket& b : op.buckets()) {
      absl::StrAppendFormat(&out, "  %-26s %12d %16.1f %12.6f\n",
                            BucketLabel(b.log2(), stats.mpitrace_bins()),
                            b.calls(), AvgBytes(b.bytes(), b.calls()),
                            Seconds(b.dur_ns()));
    }
  }
  out +=
      "\nCommunication per rank (elapsed: MPI_Init to MPI_Finalize, as "
      "mpitrace; traced: first span to last; -: not known):\n";
  absl::StrAppendFormat(
      &out, "%6s  %-20s %10s %12s %12s %12s %10s %10s %10s %10s  %s\n", "rank",
      "host", "#calls", "comm(s)", "elapsed(s)", "traced(s)", "user(s)",
      "system(s)", "size(MB)", "switches", "source");
  for (const v1::RankStats& r : stats.ranks()) {
    // Resource use is the process's whole run: none sent, or none in a
    // time window, is "-" in all four.
    const bool resources = r.user_ns() != 0 || r.system_ns() != 0 ||
                           r.max_rss_bytes() != 0 || r.context_switches() != 0;
    auto resource = [&](const std::string& text) {
      return resources ? text : std::string("-");
    };
    absl::StrAppendFormat(
        &out, "%6d  %-20s %10d %12.6f %12s %12s %10s %10s %10s %10s  %s\n",
        r.rank(), r.host(), r.calls(), Seconds(r.comm_ns()),
        SecondsOrDash(r.mpi_elapsed_ns()), SecondsOrDash(r.elapsed_ns()),
        resource(absl::StrFormat("%.3f", Seconds(r.user_ns()))),
        resource(absl::StrFormat("%.3f", Seconds(r.system_ns()))),
        resource(absl::StrFormat("%.3f", MiB(r.max_rss_bytes()))),
        resource(absl::StrCat(r.context_switches())),
        r.source().empty() ? "spans" : absl::StrCat(r.source(), " (imported)"));
  }
  if (stats.ranks_size() > 0) {
    out += "\n" + LargestLines(stats);
    auto comm_of = [&stats](int32_t rank) {
      for (const v1::RankStats& r : stats.ranks()) {
        if (r.rank() == rank) return r.comm_ns();
      }
      return int64_t{0};
    };
    absl::StrAppendFormat(
        &out,
        "\nminimum communication time = %.6f sec for rank %d\n"
        "median communication time = %.6f sec for rank %d\n"
        "maximum communication time = %.6f sec for rank %d\n",
        Seconds(comm_of(stats.min_comm_rank())), stats.min_comm_rank(),
        Seconds(comm_of(stats.median_comm_rank())), stats.median_comm_rank(),
        Seconds(comm_of(stats.max_comm_rank())), stats.max_comm_rank());
  }
  absl::StrAppendFormat(
      &out,
      "traced time = %.6f seconds (the job's first selected span to its "
      "last).\n",
      Seconds(stats.elapsed_ns()));
  return out;
}

std::string StatsJson(const v1::StatsReply& stats, bool by_callsite) {
  std::string out = "{\"job\":";
  AppendJsonString(&out, stats.job());
  absl::StrAppend(&out, ",\"elapsed_ns\":", stats.elapsed_ns(),
                  ",\"spans_dropped\":", stats.spans_dropped());
  // The buckets' log2 are mpitrace's bins (stats --mpitrace), said only then.
  if (stats.mpitrace_bins()) out += ",\"mpitrace_bins\":true";
  out += ",\"ops\":[";
  AppendOpsJson(stats.ops(), &out);
  if (by_callsite) {
    out += "],\"callsites\":[";
    AppendCallsitesJson(stats.callsites(), &out);
  }
  out += "],\"ranks\":[";
  for (int i = 0; i < stats.ranks_size(); ++i) {
    const v1::RankStats& r = stats.ranks(i);
    absl::StrAppend(&out, i ? "," : "", "{\"rank\":", r.rank(), ",\"host\":");
    AppendJsonString(&out, r.host());
    absl::StrAppend(&out, ",\"calls\":", r.calls(),
                    ",\"comm_ns\":", r.comm_ns(),
                    ",\"elapsed_ns\":", r.elapsed_ns(), ",\"source\":");
    AppendJsonString(&out, r.source().empty() ? "spans" : r.source());
    absl::StrAppend(&out, ",\"user_ns\":", r.user_ns(),
                    ",\"system_ns\":", r.system_ns(),
                    ",\"max_rss_bytes\":", r.max_rss_bytes(),
                    ",\"context_switches\":", r.context_switches(),
                    ",\"mpi_elapsed_ns\":", r.mpi_elapsed_ns(),
                    ",\"spans_dropped\":", r.spans_dropped());
    if (r.ops_size() > 0) {
      out += ",\"ops\":[";
      AppendOpsJson(r.ops(), &out);
      out += "]";
    }
    out += "}";
  }
  absl::StrAppend(&out, "],\"min_comm_rank\":", stats.min_comm_rank(),
                  ",\"median_comm_rank\":", stats.median_comm_rank(),
                  ",\"max_comm_rank\":", stats.max_comm_rank(), "}\n");
  return out;
}

}  // namespace meridian
