#include "collector/args_blob.h"

#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace meridian {
namespace {

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool GetVarint(absl::string_view blob, size_t* pos, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *pos < blob.size(); shift += 7) {
    uint8_t byte = static_cast<uint8_t>(blob[(*pos)++]);
    *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

}  // namespace

std::string EncodeArgs(const std::vector<EncodedArg>& args) {
  std::string out;
  for (const EncodedArg& arg : args) {
    PutVarint(static_cast<uint64_t>(arg.key_id), &out);
    out.push_back(static_cast<char>(arg.type));
    switch (arg.type) {
      case EncodedArg::Type::kString:
        PutVarint(static_cast<uint64_t>(arg.string_id), &out);
        break;
      case EncodedArg::Type::kInt:
        PutVarint(ZigZag(arg.int_value), &out);
        break;
      case EncodedArg::Type::kReal: {
        char bytes[8];
        std::memcpy(bytes, &arg.real_value, 8);  // x86-64 and arm64: LE
        out.append(bytes, 8);
        break;
      }
    }
  }
  return out;
}

absl::StatusOr<std::vector<EncodedArg>> DecodeArgs(absl::string_view blob) {
  std::vector<EncodedArg> args;
  size_t pos = 0;
  auto corrupt = [&pos](const char* what) {
    return absl::DataLossError(
        absl::StrCat("args blob is corrupt at byte ", pos, ": ", what));
  };
  while (pos < blob.size()) {
    EncodedArg arg;
    uint64_t v;
    if (!GetVarint(blob, &pos, &v)) return corrupt("truncated key");
    arg.key_id = static_cast<int64_t>(v);
    if (pos >= blob.size()) return corrupt("missing type");
    uint8_t type = static_cast<uint8_t>(blob[pos++]);
    if (type > 2) return corrupt("unknown type");
    arg.type = static_cast<EncodedArg::Type>(type);
    switch (arg.type) {
      case EncodedArg::Type::kString:
        if (!GetVarint(blob, &pos, &v)) return corrupt("truncated string id");
        arg.string_id = static_cast<int64_t>(v);
        break;
      case EncodedArg::Type::kInt:
        if (!GetVarint(blob, &pos, &v)) return corrupt("truncated int");
        arg.int_value = UnZigZag(v);
        break;
      case EncodedArg::Type::kReal:
        if (blob.size() - pos < 8) return corrupt("truncated real");
        std::memcpy(&arg.real_value, blob.data() + pos, 8);
        pos += 8;
        break;
    }
    args.push_back(arg);
  }
  return args;
}

}  // namespace meridian
