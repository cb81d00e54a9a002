// UTF-8 as the wire needs it: every string that enters a batch is valid
// UTF-8 (the probe cuts names at a byte count, and a traced process may
// write any bytes), so that what is stored and served is valid text.
//
// Written here rather than taken from a library: the rule is Unicode's
// table of well-formed byte sequences (Unicode 15, table 3-7: no overlong
// forms, no surrogates, nothing above U+10FFFF), some thirty lines, and
// neither absl nor protobuf export a validator in the versions Debian 12
// ships.
//
// Example: "ab\xE2\x82" (a euro sign cut after two of its three bytes)
// repairs to "ab\xEF\xBF\xBD" (one U+FFFD replacement character for the
// cut sequence); Utf8Prefix("ab\xE2\x82\xAC", 4) is 2.
#ifndef MERIDIAN_COMMON_UTF8_H_
#define MERIDIAN_COMMON_UTF8_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace meridian {

// Length of the well-formed sequence starting at s[0], or 0 if s does not
// start with one (s not empty).
size_t Utf8SequenceLength(std::string_view s);

bool IsValidUtf8(std::string_view s);

// `s` with each maximal ill-formed subsequence replaced by U+FFFD.
std::string RepairUtf8(std::string_view s);

// The longest prefix of `s` at most `max` bytes long that does not end in
// the middle of a sequence (s itself valid or not).
size_t Utf8Prefix(std::string_view s, size_t max);

}  // namespace meridian

#endif  // MERIDIAN_COMMON_UTF8_H_
