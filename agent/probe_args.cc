#include "agent/probe_args.h"

#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "common/utf8.h"

namespace meridian {
namespace {

std::string Cut(absl::string_view s, size_t max) {
  return std::string(
      s.substr(0, Utf8Prefix(std::string_view(s.data(), s.size()), max)));
}

}  // namespace

std::vector<ProbeArg> ParseProbeArgs(absl::string_view text) {
  std::vector<ProbeArg> args;
  for (absl::string_view pair : absl::StrSplit(text, ';', absl::SkipEmpty())) {
    if (args.size() == kMaxProbeArgs) break;
    const size_t equals = pair.find('=');
    if (equals == 0 || equals == absl::string_view::npos) continue;
    ProbeArg arg;
    arg.key = Cut(pair.substr(0, equals), kMaxArgKeyBytes);
    const absl::string_view value = pair.substr(equals + 1);
    arg.is_number = absl::SimpleAtoi(value, &arg.number);
    if (!arg.is_number) arg.text = Cut(value, kMaxArgValueBytes);
    args.push_back(std::move(arg));
  }
  return args;
}

}  // namespace meridian
