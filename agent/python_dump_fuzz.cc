// libFuzzer entry point: any bytes, as the faulthandler dump a traced
// process wrote, parse without crashing into at most 32 frames, each valid
// UTF-8 of at most 512 bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "agent/python_stacks.h"
#include "common/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> frames = meridian::ParseFaulthandlerDump(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (frames.size() > 32) abort();
  for (const std::string& frame : frames) {
    if (frame.size() > 512 || !meridian::IsValidUtf8(frame)) abort();
  }
  return 0;
}
