#include "wire/span_rules.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "meridian/v1/span.pb.h"

namespace meridian {

std::string SpanProblem(const SpanFacts& f) {
  if (f.name_bytes == 0) return "name is empty";
  if (f.name_bytes > kMaxStringBytes) {
    return absl::StrCat("name is ", f.name_bytes, " bytes; at most ",
                        kMaxStringBytes, " are allowed");
  }
  if (f.category > INT32_MAX || f.category < INT32_MIN ||
      !v1::Category_IsValid(static_cast<int>(f.category)) ||
      f.category == v1::CATEGORY_UNSPECIFIED) {
    return absl::StrCat("category ", f.category, " is not a known category");
  }
  if (f.kind > INT32_MAX || f.kind < INT32_MIN ||
      !v1::SpanKind_IsValid(static_cast<int>(f.kind))) {
    return absl::StrCat("kind ", f.kind, " is not a known span kind");
  }
  if (f.start_ns < kMinTimestampNs || f.start_ns > kMaxTimestampNs) {
    return absl::StrCat(
        "start_ns ", f.start_ns,
        " is not a Unix-epoch time in nanoseconds between the years 2000 and "
        "2100");
  }
  if (f.dur_ns < 0) {
    return absl::StrCat("dur_ns is ", f.dur_ns, "; durations must be >= 0");
  }
  if (f.dur_ns > kMaxDurationNs) {
    return absl::StrCat("dur_ns is ", f.dur_ns,
                        "; durations must be at most 30 days (", kMaxDurationNs,
                        " ns)");
  }
  if (f.start_ns + f.dur_ns > kMaxTimestampNs) {
    return "ends after the year 2100";
  }
  if (f.bytes < 0) return absl::StrCat("bytes is ", f.bytes, "; must be >= 0");
  if (!std::isfinite(f.value)) return "value is not a finite number";
  return "";
}

}  // namespace meridian
