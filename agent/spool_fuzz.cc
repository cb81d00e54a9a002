// libFuzzer entry point: any bytes, read as a spool file, must be refused
// (DATA_LOSS) or decode, never crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agent/spool.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string file(reinterpret_cast<const char*>(data), size);
  std::vector<meridian::RingPosition> positions;
  meridian::v1::Batch batch;
  uint64_t spans = 0;
  meridian::DecodeSpoolFile(file, 1, &positions, &batch, &spans).IgnoreError();
  meridian::DecodeSpoolFile(file, std::nullopt, &positions, nullptr, &spans)
      .IgnoreError();
  return 0;
}
