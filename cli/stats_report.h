// How `meridian stats` prints a v1::StatsReply: as text laid out like
// mpitrace's profile, or as JSON (--json) with integer fields: every
// per-rank entry has "rank", durations are "*_ns" integers.
#ifndef MERIDIAN_QUERY_STATS_REPORT_H_
#define MERIDIAN_QUERY_STATS_REPORT_H_

#include <string>

#include "meridian/v1/query.pb.h"

namespace meridian {

std::string StatsText(const v1::StatsReply& stats);
std::string StatsJson(const v1::StatsReply& stats);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_STATS_REPORT_H_
