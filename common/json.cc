#include "common/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

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

void AppendJsonDouble(std::string* out, double value) {
  if (!std::isfinite(value)) {
    out->append("null");
    return;
  }
  char buf[32];  // the longest shortest form is 24 characters
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), value);
  const size_t n = static_cast<size_t>(r.ptr - buf);
  out->append(buf, n);
  if (std::memchr(buf, '.', n) == nullptr &&
      std::memchr(buf, 'e', n) == nullptr) {
    out->append(".0");
  }
}

void AppendJsonInt(std::string* out, int64_t value) {
  char buf[24];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), value);
  out->append(buf, static_cast<size_t>(r.ptr - buf));
}

void AppendJsonUint(std::string* out, uint64_t value) {
  char buf[24];
  const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), value);
  out->append(buf, static_cast<size_t>(r.ptr - buf));
}

void AppendFixedPoint(std::string* out, int64_t value, int decimals) {
  decimals = decimals < 0 ? 0 : decimals > 18 ? 18 : decimals;
  uint64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  const uint64_t magnitude =
      value < 0 ? -static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  if (value < 0) out->push_back('-');
  AppendJsonUint(out, magnitude / scale);
  if (decimals <= 0) return;
  char buf[24];
  const int n =
      std::snprintf(buf, sizeof(buf), ".%0*llu", decimals,
                    static_cast<unsigned long long>(magnitude % scale));
  out->append(buf, n);
}

std::string FixedPoint(int64_t value, int decimals) {
  std::string out;
  AppendFixedPoint(&out, value, decimals);
  return out;
}

void AppendMicros(std::string* out, int64_t ns) {
  AppendFixedPoint(out, ns, 3);
}

}  // namespace meridian
