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
  // The record order Horovod's and Bluefog's writer uses (name first) is
  // also what other tools write: it takes one of their operations too.
  const bool epoch = has("\"start_time_since_epoch_in_micros\"");
  const bool writer = has("{\"name\":\"process_name\",\"ph\":\"M\",");
  if (!epoch && !writer) return "";
  const bool tid = has("\"tid\":");
  const bool horovod_ops =
      has("\"name\":\"NEGOTIATE_") || has("\"name\":\"CYCLE_START\"");
  const bool bluefog_ops = has("\"name\":\"ENQUEUE_") ||
                           has("\"name\":\"PROC_") ||
                           has("\"name\":\"COMMUNICATE\"");
  if (!tid && (epoch || horovod_ops)) return "horovod";
  if (tid && bluefog_ops) return "bluefog";
  return "";
}

}  // namespace meridian
