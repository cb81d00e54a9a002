// ProtoEncoder: appends protobuf wire-format fields to a std::string, for
// exports that write a protobuf format without its generated code (the
// Perfetto trace). Nothing is allocated beyond the string's own growth.
//
// A field is its tag, varint((number << 3) | wire type), then the value:
//   varint (0)   integers, enums, bools: 7 bits a byte, low first, the top
//                bit set on all bytes but the last (int64 -1 takes 10);
//   fixed64 (1)  8 bytes little-endian: fixed64, double;
//   length (2)   varint(length), then the bytes: strings, messages.
//
// Nested messages: BeginMessage writes the tag and a one-byte length and
// returns where the length is; EndMessage writes the body's length there,
// moving the body up when the length needs more than one byte (bodies of
// 128 bytes or more: rare for trace events). Example: field 2 holding a
// message whose field 1 is varint 150:
//   size_t m = e.BeginMessage(2);   // 12 00
//   e.Varint(1, 150);               // 12 00 08 96 01
//   e.EndMessage(m);                // 12 03 08 96 01
#ifndef MERIDIAN_QUERY_EXPORT_PROTO_ENCODER_H_
#define MERIDIAN_QUERY_EXPORT_PROTO_ENCODER_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/string_view.h"

namespace meridian {

class ProtoEncoder {
 public:
  // Appends to *out, which must outlive the encoder.
  explicit ProtoEncoder(std::string* out) : out_(out) {}

  void Varint(uint32_t field, uint64_t value) {
    Tag(field, kVarint);
    RawVarint(value);
  }
  // int32 and int64 fields: negative values take ten bytes, as protobuf
  // writes them.
  void Int(uint32_t field, int64_t value) {
    Varint(field, static_cast<uint64_t>(value));
  }
  void Fixed64(uint32_t field, uint64_t value) {
    Tag(field, kFixed64);
    char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(value >> (8 * i));
    out_->append(bytes, 8);
  }
  void Double(uint32_t field, double value) {
    uint64_t bits;
    static_assert(sizeof(bits) == sizeof(value), "IEEE-754 double");
    std::memcpy(&bits, &value, sizeof(bits));
    Fixed64(field, bits);
  }
  void Bytes(uint32_t field, absl::string_view value) {
    Tag(field, kLength);
    RawVarint(value.size());
    out_->append(value.data(), value.size());
  }

  size_t BeginMessage(uint32_t field) {
    Tag(field, kLength);
    out_->push_back('\0');
    return out_->size() - 1;
  }
  void EndMessage(size_t length_at) {
    const size_t length = out_->size() - length_at - 1;
    if (length < 0x80) {
      (*out_)[length_at] = static_cast<char>(length);
      return;
    }
    char bytes[10];
    const size_t n = EncodeVarint(length, bytes);
    out_->insert(length_at + 1, n - 1, '\0');
    std::memcpy(&(*out_)[length_at], bytes, n);
  }

  // Bytes that varint `value` takes.
  static size_t VarintSize(uint64_t value) {
    size_t n = 1;
    while (value >= 0x80) value >>= 7, ++n;
    return n;
  }

 private:
  enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLength = 2 };

  static size_t EncodeVarint(uint64_t value, char* bytes) {
    size_t n = 0;
    while (value >= 0x80) {
      bytes[n++] = static_cast<char>(value | 0x80);
      value >>= 7;
    }
    bytes[n++] = static_cast<char>(value);
    return n;
  }
  void RawVarint(uint64_t value) {
    if (value < 0x80) {
      out_->push_back(static_cast<char>(value));
      return;
    }
    char bytes[10];
    out_->append(bytes, EncodeVarint(value, bytes));
  }
  void Tag(uint32_t field, WireType type) {
    RawVarint(static_cast<uint64_t>(field) << 3 | type);
  }

  std::string* const out_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_EXPORT_PROTO_ENCODER_H_
