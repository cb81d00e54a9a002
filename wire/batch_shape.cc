#include "wire/batch_shape.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace meridian {
namespace {

// Reads one varint at `*at`; false if it runs past the end or 10 bytes.
bool Varint(absl::string_view s, size_t* at, uint64_t* value) {
  *value = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*at >= s.size()) return false;
    const uint8_t byte = static_cast<uint8_t>(s[(*at)++]);
    *value |= static_cast<uint64_t>(byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

// Walks the fields of the message `s`, calling `on(field, payload)` for
// each length-delimited one; false if the message is malformed.
template <typename On>
bool Fields(absl::string_view s, On on) {
  size_t at = 0;
  while (at < s.size()) {
    uint64_t key, value;
    if (!Varint(s, &at, &key)) return false;
    const uint64_t field = key >> 3;
    switch (key & 7) {
      case 0:  // varint
        if (!Varint(s, &at, &value)) return false;
        break;
      case 1:  // 64-bit
        if (s.size() - at < 8) return false;
        at += 8;
        break;
      case 2:  // length-delimited
        if (!Varint(s, &at, &value) || value > s.size() - at) return false;
        if (!on(field, s.substr(at, value))) return false;
        at += value;
        break;
      case 5:  // 32-bit
        if (s.size() - at < 4) return false;
        at += 4;
        break;
      default:  // groups (3, 4) and 6, 7: not in this protocol
        return false;
    }
    if (field == 0) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<BatchShape> ScanBatchShape(absl::string_view bytes) {
  BatchShape shape;
  const bool ok = Fields(bytes, [&](uint64_t field, absl::string_view value) {
    switch (field) {
      case 3:
        ++shape.strings;
        return true;
      case 4:
        ++shape.processes;
        return true;
      case 5:
        ++shape.tracks;
        return true;
      case 6:
        ++shape.spans;
        return Fields(value, [&](uint64_t span_field, absl::string_view) {
          if (span_field == 17) ++shape.args;
          return true;
        });
      case 8:
        ++shape.chunks;
        return true;
      case 9:
        ++shape.rings;
        return true;
      case 10:
        ++shape.totals;
        return Fields(value, [&](uint64_t totals_field, absl::string_view) {
          if (totals_field == 7) ++shape.sizes;
          return true;
        });
      case 11:
        ++shape.totals;
        return true;
      default:
        return true;
    }
  });
  if (!ok) {
    return absl::InvalidArgumentError(
        "the batch is not a well-formed protocol buffer");
  }
  return shape;
}

std::string BatchShapeProblem(const BatchShape& shape) {
  struct Bound {
    const char* what;
    int64_t count, limit;
  };
  for (const Bound& b :
       {Bound{"strings", shape.strings, kMaxBatchStrings},
        Bound{"processes", shape.processes, kMaxBatchProcesses},
        Bound{"tracks", shape.tracks, kMaxBatchTracks},
        Bound{"span messages and chunks", shape.spans + shape.chunks,
              kMaxBatchItems},
        Bound{"span args", shape.args, kMaxBatchItems},
        Bound{"ring ranges", shape.rings, kMaxBatchTracks},
        Bound{"op and process totals", shape.totals, kMaxBatchItems},
        Bound{"size totals", shape.sizes, kMaxBatchItems}}) {
    if (b.count > b.limit) {
      return absl::StrCat("the batch has ", b.count, " ", b.what, "; at most ",
                          b.limit, " are allowed");
    }
  }
  return "";
}

}  // namespace meridian
