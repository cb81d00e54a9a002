#include "import/micros.h"

#include <limits>

namespace meridian {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

}  // namespace

bool MicrosToNs(std::string_view text, int64_t* ns) {
  size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  if (negative) ++i;
  // Digits, integer part then fraction: value = digits * 10^scale.
  uint64_t digits = 0;
  int scale = 0;
  int significant = 0;  // digits kept in `digits`
  auto add = [&](char c, bool fraction) {
    if (significant == 0 && c == '0') {
      if (fraction) --scale;
      return;
    }
    if (significant < 19) {
      digits = digits * 10 + static_cast<uint64_t>(c - '0');
      ++significant;
      if (fraction) --scale;
    } else {
      // Beyond 19 digits: far below 1 ns, or too large (the scale says).
      if (!fraction) ++scale;
    }
  };
  const size_t int_begin = i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9')
    add(text[i++], false);
  if (i == int_begin) return false;  // JSON needs an integer part
  if (i - int_begin > 1 && text[int_begin] == '0') return false;
  if (i < text.size() && text[i] == '.') {
    ++i;
    const size_t frac_begin = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9')
      add(text[i++], true);
    if (i == frac_begin) return false;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
      exp_negative = text[i] == '-';
      ++i;
    }
    const size_t exp_begin = i;
    int exponent = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (exponent < 10000) exponent = exponent * 10 + (text[i] - '0');
      ++i;
    }
    if (i == exp_begin) return false;
    scale += exp_negative ? -exponent : exponent;
  }
  if (i != text.size()) return false;
  // Microseconds to nanoseconds.
  scale += 3;
  if (digits == 0) {
    *ns = 0;
    return true;
  }
  uint64_t value = digits;
  if (scale >= 0) {
    for (int k = 0; k < scale; ++k) {
      if (value > static_cast<uint64_t>(kMax) / 10) return false;
      value *= 10;
    }
  } else {
    uint64_t divisor = 1;
    for (int k = 0; k < -scale; ++k) {
      if (divisor > std::numeric_limits<uint64_t>::max() / 10) {
        value = 0;  // far below 1 ns
        divisor = 1;
        break;
      }
      divisor *= 10;
    }
    const uint64_t remainder = value % divisor;
    value /= divisor;
    if (divisor > 1 && remainder >= divisor - remainder) ++value;
  }
  if (value > static_cast<uint64_t>(kMax)) return false;
  *ns = negative ? -static_cast<int64_t>(value) : static_cast<int64_t>(value);
  return true;
}

}  // namespace meridian
