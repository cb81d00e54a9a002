// MpitraceTotals: an mpitrace profile (mpitrace_profile_reader.h) as what
// `meridian import` stores for it: statistics, no spans.
//   - the profile's rank: one process (node: --node, else the host rank
//     0's table gives it, else the file's name), with one ImportedOpTotals
//     per routine called (category MPI; calls, bytes, time, size buckets)
//     and one ImportedProcessTotals (communication time: the file's total,
//     else the routines' sum; elapsed time; source "mpitrace");
//   - in rank 0's file, every other rank of its "MPI timing summary for
//     all ranks" table: a process (node: its host) with its communication
//     and elapsed time only. The same rank's own profile, imported too,
//     adds its routines; `meridian stats` takes a rank's imported times
//     once.
#ifndef MERIDIAN_IMPORT_MPITRACE_TOTALS_H_
#define MERIDIAN_IMPORT_MPITRACE_TOTALS_H_

#include <cstdint>
#include <string>

#include "import/imported_trace.h"
#include "import/mpitrace_profile_reader.h"

namespace meridian {

// `node`: --node, or "" (then as above, `file_name` last); `rank`: --rank,
// or -1 for the profile's.
ImportedTrace MpitraceTotals(const MpitraceProfile& profile,
                             const std::string& node,
                             const std::string& file_name, int32_t rank);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_MPITRACE_TOTALS_H_
