// Minimal JSON output helpers shared by the trace exports, the --json
// reports and the web page's answers. Output is UTF-8 as stored; control
// characters, quotes and backslashes are escaped, so any stored name yields
// valid JSON.
#ifndef MERIDIAN_COMMON_JSON_H_
#define MERIDIAN_COMMON_JSON_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace meridian {

// Appends `s` as a quoted JSON string.
void AppendJsonString(std::string* out, absl::string_view s);

// Appends ns / 1000 as a decimal with exactly three fraction digits
// ("12.345"): microseconds that keep nanosecond precision.
void AppendMicros(std::string* out, int64_t ns);

}  // namespace meridian

#endif  // MERIDIAN_COMMON_JSON_H_
