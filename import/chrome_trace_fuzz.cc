// libFuzzer entry point: any bytes, read as a Chrome/Kineto/Meridian JSON
// trace, must import or be refused with an error, never crash, hang or
// read out of bounds.
#include <cstddef>
#include <cstdint>
#include <string>

#include "import/chrome_trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  meridian::ImportOptions options;
  options.file = "fuzz.json";
  options.fallback_end_ns = 1764000000000000000;
  auto trace = meridian::ReadChromeTrace(
      std::string(reinterpret_cast<const char*>(data), size), options);
  (void)trace;
  return 0;
}
