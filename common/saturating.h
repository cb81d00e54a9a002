// SaturatingAdd: a sum of recorded int64 values (bytes, ns) that stops at
// the int64 limits instead of wrapping. A span may record any byte count up
// to 9223372036854775807, so a total of several can pass it: such a total
// is shown as 9223372036854775807 (docs/import-export.md, "Numbers"), never as
// the wrapped, wrong, number.
#ifndef MERIDIAN_COMMON_SATURATING_H_
#define MERIDIAN_COMMON_SATURATING_H_

#include <cstdint>
#include <limits>

namespace meridian {

inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<int64_t>::max()
               : std::numeric_limits<int64_t>::min();
}

}  // namespace meridian

#endif  // MERIDIAN_COMMON_SATURATING_H_
