// libFuzzer entry point: arbitrary bytes as a stored part of a job's clock
// evidence (clock_evidence.h), read as JobClocks::Update reads one. Each
// run ends with a part read or refused as damaged; never a crash, a hang or
// a read out of bounds, whatever its columns or counts say.
#include <cstddef>
#include <cstdint>

#include "query/clocks/clock_evidence.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  meridian::ClockEvidence evidence;
  meridian::DecodeEvidence(
      absl::string_view(reinterpret_cast<const char*>(data), size), &evidence);
  return 0;
}
