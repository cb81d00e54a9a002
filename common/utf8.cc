#include "common/utf8.h"

#include <cstdint>

namespace meridian {

size_t Utf8SequenceLength(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  const uint8_t b0 = byte(0);
  if (b0 < 0x80) return 1;
  size_t n;
  uint8_t lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (s.size() < 2 || byte(1) < lo || byte(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if (i >= s.size() || byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return n;
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    if (static_cast<uint8_t>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = Utf8SequenceLength(s.substr(i));
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string RepairUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const size_t n = Utf8SequenceLength(s.substr(i));
    if (n > 0) {
      out.append(s.data() + i, n);
      i += n;
      continue;
    }
    out += "\xEF\xBF\xBD";
    // One replacement for the lead byte and the continuation bytes that
    // follow it (a cut sequence becomes one character, not several).
    ++i;
    while (i < s.size() && (static_cast<uint8_t>(s[i]) & 0xC0) == 0x80) ++i;
  }
  return out;
}

size_t Utf8Prefix(std::string_view s, size_t max) {
  if (s.size() <= max) return s.size();
  const auto continuation = [&](size_t i) {
    return (static_cast<uint8_t>(s[i]) & 0xC0) == 0x80;
  };
  // s[max] is the first byte cut off: if it continues a sequence, back off
  // to that sequence's lead byte (at most three bytes back) and cut before
  // it. Bytes that are no sequence at all are cut where they are.
  size_t end = max;
  while (end > 0 && max - end < 3 && continuation(end)) --end;
  return continuation(end) ? max : end;
}

}  // namespace meridian
