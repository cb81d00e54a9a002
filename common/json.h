// Minimal JSON output helpers shared by the trace exports, the --json
// reports and the web page's answers. Output is UTF-8 as stored; control
// characters, quotes and backslashes are escaped, so any stored name yields
// valid JSON.
#ifndef MERIDIAN_COMMON_JSON_H_
#define MERIDIAN_COMMON_JSON_H_

#include <cstdint>
#include <string>
#include <type_traits>

#include "absl/strings/string_view.h"

namespace meridian {

// How every JSON output of Meridian writes a number, so that it reads back
// as exactly what was recorded (docs/import-export.md, "Numbers"):
//  - an integer (bytes, ns times, ids, counts): its decimal digits, never an
//    exponent;
//  - a double: the shortest decimal that reads back as the same double
//    (std::to_chars), with ".0" added when that has neither a fraction nor
//    an exponent, so that readers that type numbers keep it a float
//    (Python reads 1234567890123.0, not the integer) and -0.0 keeps its sign.
//    NaN and the infinities, which JSON cannot write, are written as null
//    (stored values are finite: the collector refuses others).
// Examples: 0.1 -> "0.1", 1234567890123.0 -> "1234567890123.0", -0.0 ->
// "-0.0", 5e-324 -> "5e-324", 1e300 -> "1e+300", int64 max ->
// "9223372036854775807".
void AppendJsonDouble(std::string* out, double value);
void AppendJsonInt(std::string* out, int64_t value);
void AppendJsonUint(std::string* out, uint64_t value);

template <typename T>
void AppendJsonNumber(std::string* out, T value) {
  static_assert(!std::is_same_v<T, bool>, "write true or false instead");
  if constexpr (std::is_floating_point_v<T>) {
    AppendJsonDouble(out, static_cast<double>(value));
  } else if constexpr (std::is_signed_v<T>) {
    AppendJsonInt(out, static_cast<int64_t>(value));
  } else {
    AppendJsonUint(out, static_cast<uint64_t>(value));
  }
}

// Appends `s` as a quoted JSON string.
void AppendJsonString(std::string* out, absl::string_view s);

// Appends value / 10^decimals exactly, with `decimals` fraction digits
// (taken as 0..18): AppendFixedPoint(out, -1500, 3) appends "-1.500". What
// texts use to show ns as µs or s without rounding.
void AppendFixedPoint(std::string* out, int64_t value, int decimals);
// The same, as a string of its own (a text report's column).
std::string FixedPoint(int64_t value, int decimals);

// Appends ns / 1000 as a decimal with exactly three fraction digits
// ("12.345"): microseconds that keep nanosecond precision.
void AppendMicros(std::string* out, int64_t ns);

}  // namespace meridian

#endif  // MERIDIAN_COMMON_JSON_H_
