// libFuzzer entry point: any bytes, read as a Horovod timeline, a BytePS
// comm.json and a Bluefog timeline (and sniffed by DetectTimelineFormat),
// must import or be refused with an error, never crash, hang or read out
// of bounds.
#include <cstddef>
#include <cstdint>
#include <string>

#include "import/bluefog_timeline_reader.h"
#include "import/byteps_trace_reader.h"
#include "import/horovod_timeline_reader.h"
#include "import/timeline_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  meridian::ImportOptions options;
  options.fallback_end_ns = 1764000000000000000;
  (void)meridian::DetectTimelineFormat(input);
  options.file = "fuzz/timeline.json";
  (void)meridian::ReadHorovodTimeline(input, options);
  options.file = "fuzz/3/comm.json";
  (void)meridian::ReadBytePSTrace(input, options);
  options.file = "fuzz/tl2.json";
  (void)meridian::ReadBluefogTimeline(input, options);
  return 0;
}
