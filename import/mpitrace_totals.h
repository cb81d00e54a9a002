// MpitraceTotals: an mpitrace profile (mpitrace_profile_reader.h) as what
// `meridian import` stores for it: statistics, no spans.
//   - the profile's rank: one process (node: --node, else the host rank
//     0's table gives it, else the file's name), with one ImportedOpTotals
//     per routine called (category MPI; calls, bytes, time, size buckets)
//     and one ImportedProcessTotals (communication time: the file's total,
//     else the routines' sum; elapsed time; source "mpitrace");
//   - in rank 0's file, every other rank of its "MPI timing summary for
//     all ranks" table: a process (node: its host) with its communication
//     and elapsed time only (to the 10 ms, as the table prints them).
// The profiles of one run imported together (one `meridian import`) are
// read first (MpitraceRun): a rank's own file, which gives no host, is on
// the host rank 0's table names, takes its switches from that row, and
// its times (to the ms) from itself, not from the row.
#ifndef MERIDIAN_IMPORT_MPITRACE_TOTALS_H_
#define MERIDIAN_IMPORT_MPITRACE_TOTALS_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "import/imported_trace.h"
#include "import/mpitrace_profile_reader.h"

namespace meridian {

// What a run's profiles imported together say of each other: the rows of
// their tables of all ranks, and the ranks whose own profiles are among
// them.
struct MpitraceRun {
  std::map<int32_t, MpitraceRankTotals> rows;
  std::set<int32_t> own_profiles;
};
MpitraceRun MpitraceRunOf(const std::vector<const MpitraceProfile*>& profiles);

// `node`: --node, or "" (then as above, `file_name` last); `rank`: --rank,
// or -1 for the profile's (only then is `run`, if given, used).
ImportedTrace MpitraceTotals(const MpitraceProfile& profile,
                             const std::string& node,
                             const std::string& file_name, int32_t rank,
                             const MpitraceRun* run = nullptr);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_MPITRACE_TOTALS_H_
