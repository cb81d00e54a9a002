// How the analysis commands print their replies: `meridian critical-path`,
// `stragglers`, `steps` and `compare`, as text for people or as JSON
// (--json) for scripts. In JSON, times are integer ns in fields ending in
// "_ns" (durations "dur_ns", waiting "wait_ns"), every per-rank entry has
// an integer "rank", 64-bit communicator ids are hex strings; texts show
// milliseconds.
#ifndef MERIDIAN_QUERY_ANALYSIS_REPORT_H_
#define MERIDIAN_QUERY_ANALYSIS_REPORT_H_

#include <string>

#include "meridian/v1/query.pb.h"

namespace meridian {

std::string CriticalPathText(const v1::CriticalPathReply& path);
std::string CriticalPathJson(const v1::CriticalPathReply& path);
std::string StragglersText(const v1::StragglersReply& reply);
std::string StragglersJson(const v1::StragglersReply& reply);
std::string StepsText(const v1::StepsReply& reply);
std::string StepsJson(const v1::StepsReply& reply);
std::string CompareText(const v1::CompareReply& reply);
std::string CompareJson(const v1::CompareReply& reply);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_REPORT_H_
