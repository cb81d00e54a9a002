// The span-filter flags of `meridian export` and `meridian stats`, parsed
// into a v1::SpanFilter:
//   --ranks 0,2-5          ranks and inclusive ranges
//   --category mpi,user    category names (query/ops/category.h)
//   --name GLOB            shell glob on span names (* ? [...])
//   --from T / --to T      time on the exported trace's timeline, since its
//                          origin (query/clocks/shown_window.h): a number
//                          with a unit ns, us, ms or s (bare numbers are
//                          seconds)
//   --steps A:B            steps A..B inclusive; "A:" and ":B" are open, "N"
//                          is one step
// Each error is INVALID_ARGUMENT naming the flag and what it accepts.
#ifndef MERIDIAN_CLI_FILTER_FLAGS_H_
#define MERIDIAN_CLI_FILTER_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/command_line.h"
#include "meridian/v1/query.pb.h"

namespace meridian {

inline const std::vector<std::string> kFilterFlags = {
    "job", "ranks", "category", "name", "from", "to", "steps"};

absl::StatusOr<std::vector<int32_t>> ParseRanks(absl::string_view text);
absl::StatusOr<int64_t> ParseDurationNs(absl::string_view text);
absl::StatusOr<v1::SpanFilter> ParseFilter(const CommandLine& line);

// The steps of an analysis command's --step N or --steps A:B (replay,
// waits): (first, last), nullopt if neither is given; INVALID_ARGUMENT
// naming the flag when both are, or when a value is not one.
absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>> ParseStepFlags(
    const CommandLine& line);

}  // namespace meridian

#endif  // MERIDIAN_CLI_FILTER_FLAGS_H_
