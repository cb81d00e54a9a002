// `meridian waits` (docs/analysis.md, "Wait states"): its request from the
// command line, and its reply as text for people or JSON for scripts:
//   {"job", "patterns": [{"pattern", "rank", "step" (absent for job
//    totals), "wait_ns", "instances", "caused_by": [{"rank", "in", "ns"}]}],
//    "ranks": [{"rank", "wait_ns", "short_term_ns", "long_term_ns"}]}
#ifndef MERIDIAN_CLI_WAITS_REPORT_H_
#define MERIDIAN_CLI_WAITS_REPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "common/command_line.h"
#include "meridian/v1/query.pb.h"

namespace meridian {

// --job J [--step N | --steps A:B] [--ranks R]: INVALID_ARGUMENT naming
// the flag that is wrong.
absl::StatusOr<v1::WaitsRequest> WaitsRequestOf(const CommandLine& line);

std::string WaitsText(const v1::WaitsReply& reply);
std::string WaitsJson(const v1::WaitsReply& reply);

}  // namespace meridian

#endif  // MERIDIAN_CLI_WAITS_REPORT_H_
