// How the analysis commands print their replies: `meridian critical-path`,
// `stragglers`, `steps` and `compare`, as text for people or as JSON
// (--json) for scripts. In JSON, times are integer ns in fields ending in
// "_ns" (durations "dur_ns", waiting "wait_ns"), every per-rank entry has
// an integer "rank", 64-bit communicator ids are hex strings, and other
// numbers are exact (common/json.h); texts show milliseconds rounded to the
// microsecond and percentages to 0.1, and say so in their headers.
#ifndef MERIDIAN_CLI_ANALYSIS_REPORT_H_
#define MERIDIAN_CLI_ANALYSIS_REPORT_H_

#include <cstdint>
#include <string>

#include "meridian/v1/query.pb.h"

namespace meridian {

// The line under a text report's title that says how its numbers are
// rounded.
inline constexpr char kRoundingLine[] =
    "(Times in ms, rounded to the µs; percentages to 0.1 %. --json gives "
    "exact ns.)\n";
// Nanoseconds as milliseconds; `part` as a percentage of `whole` (0 when
// `whole` is not positive).
double Ms(int64_t ns);
double Percent(int64_t part, int64_t whole);
// A path's time per class: "compute 5.000 ms (98.0%), communication 0.100
// ms (2.0%), waiting 0.000 ms (0.0%), untraced 0.000 ms (0.0%)".
std::string PathBreakdownText(const v1::CriticalPathReply& path);

std::string CriticalPathText(const v1::CriticalPathReply& path);
std::string CriticalPathJson(const v1::CriticalPathReply& path);
std::string StragglersText(const v1::StragglersReply& reply);
std::string StragglersJson(const v1::StragglersReply& reply);
std::string StepsText(const v1::StepsReply& reply);
std::string StepsJson(const v1::StepsReply& reply);
std::string CompareText(const v1::CompareReply& reply);
std::string CompareJson(const v1::CompareReply& reply);

}  // namespace meridian

#endif  // MERIDIAN_CLI_ANALYSIS_REPORT_H_
