// How `meridian stats` prints a v1::StatsReply: as text laid out like
// mpitrace's profile, or as JSON (--json) with integer fields: every
// per-rank entry has "rank", durations are "*_ns" integers.
//
// With `by_callsite` (--by-callsite), also StatsReply.callsites: in text a
// "Call sites:" table after the operations, columns as theirs and the call
// site last (or one line saying none were recorded, as for a job run
// without MERIDIAN_CALLSITES=1); in JSON a "callsites" array after "ops",
// each {"name","category","callsite","calls","bytes","dur_ns"}.
#ifndef MERIDIAN_CLI_STATS_REPORT_H_
#define MERIDIAN_CLI_STATS_REPORT_H_

#include <string>

#include "meridian/v1/query.pb.h"

namespace meridian {

std::string StatsText(const v1::StatsReply& stats, bool by_callsite = false);
std::string StatsJson(const v1::StatsReply& stats, bool by_callsite = false);

}  // namespace meridian

#endif  // MERIDIAN_CLI_STATS_REPORT_H_
