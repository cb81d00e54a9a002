// ArgsBlob: the compact encoding of a span's key/value args in the store.
//
// Keys and string values are interned (global string ids), so an arg costs a
// few bytes. Layout, repeated per arg:
//   varint key_id, byte type (0 string, 1 int, 2 real), then
//   string: varint value_id | int: zigzag varint | real: 8 bytes little-endian
// An empty blob means no args.
#ifndef MERIDIAN_COLLECTOR_ARGS_BLOB_H_
#define MERIDIAN_COLLECTOR_ARGS_BLOB_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace meridian {

struct EncodedArg {
  enum class Type : uint8_t { kString = 0, kInt = 1, kReal = 2 };
  int64_t key_id = 0;
  Type type = Type::kInt;
  int64_t string_id = 0;  // kString
  int64_t int_value = 0;  // kInt
  double real_value = 0;  // kReal

  bool operator==(const EncodedArg& o) const {
    return key_id == o.key_id && type == o.type && string_id == o.string_id &&
           int_value == o.int_value && real_value == o.real_value;
  }
};

std::string EncodeArgs(const std::vector<EncodedArg>& args);

// DATA_LOSS naming the byte offset if `blob` is truncated or malformed.
absl::StatusOr<std::vector<EncodedArg>> DecodeArgs(absl::string_view blob);

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_ARGS_BLOB_H_
