// libFuzzer entry point: any bytes, as a traced process's span arguments,
// decode within bounds: at most kMaxProbeArgs pairs, non-empty keys, keys
// and values within their byte limits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "agent/probe_args.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto args = meridian::ParseProbeArgs(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  if (args.size() > meridian::kMaxProbeArgs) abort();
  for (const meridian::ProbeArg& arg : args) {
    if (arg.key.empty() || arg.key.size() > meridian::kMaxArgKeyBytes ||
        arg.text.size() > meridian::kMaxArgValueBytes) {
      abort();
    }
  }
  return 0;
}
