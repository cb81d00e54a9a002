#include "import/mpitrace_totals.h"

namespace meridian {

MpitraceRun MpitraceRunOf(const std::vector<const MpitraceProfile*>& profiles) {
  MpitraceRun run;
  for (const MpitraceProfile* p : profiles) {
    run.own_profiles.insert(p->rank);
    for (const MpitraceRankTotals& r : p->ranks) run.rows.emplace(r.rank, r);
  }
  return run;
}

ImportedTrace MpitraceTotals(const MpitraceProfile& profile,
                             const std::string& node,
                             const std::string& file_name, int32_t rank,
                             const MpitraceRun* run) {
  if (rank >= 0) run = nullptr;  // the file's ranks are not the job's
  ImportedTrace trace;
  trace.format = "mpitrace";
  // This rank's row of a table of all ranks: its own file's (rank 0's),
  // else another file's of the run.
  const MpitraceRankTotals* row = nullptr;
  for (const MpitraceRankTotals& r : profile.ranks) {
    if (r.rank == profile.rank) row = &r;
  }
  if (row == nullptr && run != nullptr) {
    auto it = run->rows.find(profile.rank);
    if (it != run->rows.end()) row = &it->second;
  }
  ProcessDesc own;
  own.rank = rank >= 0 ? rank : profile.rank;
  own.node = !node.empty()                          ? node
             : !profile.host.empty()                ? profile.host
             : row != nullptr && !row->host.empty() ? row->host
                                                    : file_name;
  trace.processes.push_back(own);
  int64_t routines_ns = 0;
  for (const MpitraceRoutine& r : profile.routines) {
    if (r.calls == 0) continue;
    ImportedOpTotals op;
    op.process = 0;
    op.category = v1::CATEGORY_MPI;
    op.name = r.name;
    op.calls = r.calls;
    op.bytes = r.bytes;
    op.dur_ns = r.time_ns;
    for (const MpitraceSizeBucket& b : r.buckets) {
      op.sizes.push_back({b.log2, b.calls, b.bytes, b.time_ns});
    }
    routines_ns += r.time_ns;
    trace.op_totals.push_back(std::move(op));
  }
  // This rank's times and resource use: its own summary lines, else its
  // row of rank 0's table (switches are only there).
  ImportedProcessTotals totals;
  totals.process = 0;
  totals.comm_ns = profile.comm_ns.value_or(routines_ns);
  totals.elapsed_ns =
      profile.elapsed_ns.value_or(row != nullptr ? row->elapsed_ns : 0);
  totals.source = "mpitrace";
  totals.user_ns = profile.user_ns;
  totals.system_ns = profile.system_ns;
  totals.max_rss_bytes = profile.max_rss_bytes;
  if (row != nullptr) {
    if (!totals.user_ns) totals.user_ns = row->user_ns;
    if (!totals.system_ns) totals.system_ns = row->system_ns;
    if (!totals.max_rss_bytes) totals.max_rss_bytes = row->max_rss_bytes;
    totals.context_switches = row->context_switches;
  }
  trace.process_totals.push_back(std::move(totals));
  // Rank 0's table: the other ranks' times. With --rank the file's ranks
  // are not the job's, so the table is left out.
  if (rank >= 0) return trace;
  for (const MpitraceRankTotals& r : profile.ranks) {
    if (r.rank == profile.rank) continue;
    if (run != nullptr && run->own_profiles.count(r.rank) > 0) continue;
    ProcessDesc other;
    other.rank = r.rank;
    other.node = !node.empty() ? node : r.host;
    trace.processes.push_back(other);
    ImportedProcessTotals totals;
    totals.process = static_cast<int>(trace.processes.size()) - 1;
    totals.comm_ns = r.comm_ns;
    totals.elapsed_ns = r.elapsed_ns;
    totals.source = "mpitrace";
    totals.user_ns = r.user_ns;
    totals.system_ns = r.system_ns;
    totals.max_rss_bytes = r.max_rss_bytes;
    totals.context_switches = r.context_switches;
    trace.process_totals.push_back(std::move(totals));
  }
  return trace;
}

}  // namespace meridian
