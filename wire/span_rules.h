// SpanRules: what one span must be to be stored, the single check that the
// agent applies to each record it reads from a traced process and the
// collector applies again to each span of a batch (it trusts no agent).
// A span that breaks a rule is dropped and counted on its own: it never
// costs the spans around it (other ranks', other jobs') their place.
//
// Rules (also in docs/wire-and-store.md):
//   - name: 1..kMaxStringBytes bytes;
//   - category and kind: known values (category not UNSPECIFIED);
//   - start_ns within [kMinTimestampNs, kMaxTimestampNs] (years 2000..2100
//     in Unix-epoch ns); 0 <= dur_ns <= kMaxDurationNs (30 days);
//     start_ns + dur_ns <= kMaxTimestampNs;
//   - bytes >= 0; a counter's value is a finite number.
//
// Example: a span of 31 days is "dur_ns is 2678400000000000; durations must
// be at most 30 days (2592000000000000 ns)".
#ifndef MERIDIAN_WIRE_SPAN_RULES_H_
#define MERIDIAN_WIRE_SPAN_RULES_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace meridian {

inline constexpr int64_t kMinTimestampNs = 946684800LL * 1000000000LL;
inline constexpr int64_t kMaxTimestampNs = 4102444800LL * 1000000000LL;
inline constexpr int64_t kMaxDurationNs = 30LL * 24 * 3600 * 1000000000LL;
inline constexpr size_t kMaxStringBytes = 64 * 1024;

// The fields the rules look at, however the span travels.
struct SpanFacts {
  size_t name_bytes;
  int64_t category;  // v1::Category
  int64_t kind;      // v1::SpanKind
  int64_t start_ns;
  int64_t dur_ns;
  int64_t bytes;
  double value;
};

// "" if the span may be stored; otherwise which field is wrong and what is
// allowed. Costs no allocation for a span that passes.
std::string SpanProblem(const SpanFacts& span);

}  // namespace meridian

#endif  // MERIDIAN_WIRE_SPAN_RULES_H_
