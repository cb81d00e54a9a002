// RowBinary, ClickHouse's binary row format, which the ClickHouse store
// writes (INSERT ... FORMAT RowBinary) and reads (SELECT ... FORMAT
// RowBinary): fixed-width integers and floats little-endian, a String or an
// Array as its length (unsigned LEB128) then its bytes or elements. The
// same in ClickHouse 18.16 and current releases. Binary, so span chunks
// travel as they are, with nothing to escape.
//
// Example:
//   RowBinaryWriter w;
//   w.Int64(7); w.String("abc");       // one row of (Int64, String)
//   RowBinaryReader r(w.bytes());
//   int64_t x; absl::string_view s;
//   r.Int64(&x) && r.String(&s);       // 7, "abc"
#ifndef MERIDIAN_STORE_ROW_BINARY_H_
#define MERIDIAN_STORE_ROW_BINARY_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace meridian {

class RowBinaryWriter {
 public:
  void Int64(int64_t v) { Fixed(&v, sizeof v); }
  void Int32(int32_t v) { Fixed(&v, sizeof v); }
  void UInt8(uint8_t v) { Fixed(&v, sizeof v); }
  void Float64(double v) { Fixed(&v, sizeof v); }
  void String(absl::string_view s);
  void ArraySize(size_t n) { Length(n); }
  const std::string& bytes() const { return out_; }
  std::string Take() { return std::move(out_); }
  void Clear() { out_.clear(); }

 private:
  void Fixed(const void* v, size_t n);
  void Length(uint64_t n);
  std::string out_;
};

// Reads fields from `in` in order. Each read returns false, and leaves the
// reader where it was, if `in` ends before the field does (or a length is
// beyond `max_length`): the caller tells a truncated row from a bad one.
class RowBinaryReader {
 public:
  explicit RowBinaryReader(absl::string_view in) : in_(in) {}
  bool Int64(int64_t* v) { return Fixed(v, sizeof *v); }
  bool Int32(int32_t* v) { return Fixed(v, sizeof *v); }
  bool UInt8(uint8_t* v) { return Fixed(v, sizeof *v); }
  bool Float64(double* v) { return Fixed(v, sizeof *v); }
  // A view into `in`.
  bool String(absl::string_view* s);
  bool ArraySize(uint64_t* n) { return Length(n); }
  size_t offset() const { return at_; }
  bool done() const { return at_ == in_.size(); }

  // Lengths above this are refused (a String or an Array's count).
  static constexpr uint64_t kMaxLength = 1ull << 31;

 private:
  bool Fixed(void* v, size_t n);
  bool Length(uint64_t* n);
  absl::string_view in_;
  size_t at_ = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_STORE_ROW_BINARY_H_
