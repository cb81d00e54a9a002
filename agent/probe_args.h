// ProbeArgs: the arguments a traced process attaches to a span, as the
// probe's C API writes them into its string area ("key=value;key=value",
// capture/probe/include/meridian/probe.h), decoded by the agent.
//
// The text comes from the traced process: anything may be in it. Pairs
// without '=' or with an empty key are skipped; a value that is a whole
// decimal int64 is a number, any other a string; at most kMaxProbeArgs
// pairs are kept, keys cut to kMaxArgKeyBytes and text values to
// kMaxArgValueBytes (on character boundaries). Names are made valid UTF-8
// later, by the batch builder.
//
// Example: "bucket=3;phase=fwd;=x;junk" -> bucket 3, phase "fwd".
#ifndef MERIDIAN_AGENT_PROBE_ARGS_H_
#define MERIDIAN_AGENT_PROBE_ARGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace meridian {

inline constexpr size_t kMaxProbeArgs = 64;
inline constexpr size_t kMaxArgKeyBytes = 256;
inline constexpr size_t kMaxArgValueBytes = 4096;

struct ProbeArg {
  std::string key;
  std::string text;    // the value if it is not an integer
  int64_t number = 0;  // the value if is_number
  bool is_number = false;
};

std::vector<ProbeArg> ParseProbeArgs(absl::string_view text);

}  // namespace meridian

#endif  // MERIDIAN_AGENT_PROBE_ARGS_H_
