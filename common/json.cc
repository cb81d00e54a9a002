#include "common/json.h"

#include <cstdio>

namespace meridian {

void AppendJsonString(std::string* out, absl::string_view s) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out->append(buf);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void AppendMicros(std::string* out, int64_t ns) {
  char buf[32];
  const char* sign = ns < 0 ? "-" : "";
  uint64_t magnitude = ns < 0 ? -static_cast<uint64_t>(ns) : ns;
  int n = std::snprintf(buf, sizeof(buf), "%s%llu.%03llu", sign,
                        static_cast<unsigned long long>(magnitude / 1000),
                        static_cast<unsigned long long>(magnitude % 1000));
  out->append(buf, n);
}

}  // namespace meridian
