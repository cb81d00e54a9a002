#include "store/row_binary.h"

#include <cstring>

namespace meridian {

// Fixed-width fields are copied as the host holds them: little-endian, as
// on every machine Meridian builds for (x86-64, aarch64).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "RowBinary is little-endian");

void RowBinaryWriter::Fixed(const void* v, size_t n) {
  out_.append(static_cast<const char*>(v), n);
}

void RowBinaryWriter::Length(uint64_t n) {
  while (n >= 0x80) {
    out_.push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  out_.push_back(static_cast<char>(n));
}

void RowBinaryWriter::String(absl::string_view s) {
  Length(s.size());
  out_.append(s.data(), s.size());
}

bool RowBinaryReader::Fixed(void* v, size_t n) {
  if (in_.size() - at_ < n) return false;
  memcpy(v, in_.data() + at_, n);
  at_ += n;
  return true;
}

bool RowBinaryReader::Length(uint64_t* n) {
  uint64_t value = 0;
  size_t at = at_;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at == in_.size()) return false;
    const uint8_t byte = static_cast<uint8_t>(in_[at++]);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      if (value > kMaxLength) return false;
      *n = value;
      at_ = at;
      return true;
    }
  }
  return false;
}

bool RowBinaryReader::String(absl::string_view* s) {
  const size_t start = at_;
  uint64_t n = 0;
  if (!Length(&n)) return false;
  if (in_.size() - at_ < n) {
    at_ = start;
    return false;
  }
  *s = in_.substr(at_, n);
  at_ += n;
  return true;
}

}  // namespace meridian
