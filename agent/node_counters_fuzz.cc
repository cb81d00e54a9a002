// libFuzzer entry point: any bytes, as /proc/stat, /proc/meminfo or a sysfs
// counter file, parse to nothing or to consistent values (busy and idle
// within the total, available memory within the total).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "agent/node_counters.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto cpu = meridian::ParseProcStat(text)) {
    if (cpu->busy > cpu->total || cpu->iowait > cpu->total ||
        cpu->steal > cpu->busy) {
      abort();
    }
  }
  if (auto mem = meridian::ParseMeminfo(text)) {
    if (mem->available_bytes > mem->total_bytes) abort();
  }
  (void)meridian::ParseCounterFile(text);
  (void)meridian::IsCounterNamePart(text);
  return 0;
}
