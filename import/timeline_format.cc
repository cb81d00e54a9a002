#include "import/timeline_format.h"

namespace meridian {

std::string DetectTimelineFormat(std::string_view head) {
  std::string squeezed;
  squeezed.reserve(head.size());
  for (const char c : head) {
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') squeezed.push_back(c);
  }
  auto has = [&](std::string_view s) {
    return squeezed.find(s) != std::string::npos;
  };
  if (has("\"pid\":\"Comm.")) return "byteps";
  if (squeezed.empty() || squeezed[0] != '[') return "";
  const bool writer = has("{\"name\":\"process_name\",\"ph\":\"M\",") ||
                      has("\"start_time_since_epoch_in_micros\"");
  if (!writer) return "";
  return has("\"tid\":") ? "bluefog" : "horovod";
}

}  // namespace meridian
