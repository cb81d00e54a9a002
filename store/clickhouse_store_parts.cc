#include "store/clickhouse_store_parts.h"

#include <openssl/evp.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace meridian {
namespace clickhouse {

std::string Quote(absl::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  out += "'";
  return out;
}

int64_t ContentId(const RowBinaryWriter& what) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(what.bytes().data(), what.bytes().size(), digest, &size,
             EVP_sha256(), nullptr);
  uint64_t id = 0;
  memcpy(&id, digest, sizeof id);
  id &= 0x7fffffffffffffffull;
  return id == 0 ? 1 : static_cast<int64_t>(id);
}

int64_t StringId(absl::string_view s) {
  RowBinaryWriter w;
  w.String("string");
  w.String(s);
  return ContentId(w);
}

int64_t JobId(absl::string_view name) {
  RowBinaryWriter w;
  w.String("job");
  w.String(name);
  return ContentId(w);
}

int64_t OpIdOf(int64_t category, int64_t name_id) {
  RowBinaryWriter w;
  w.String("op");
  w.Int64(category);
  w.Int64(name_id);
  return ContentId(w);
}

absl::Status ReadRows(ClickHouseClient* client, const std::string& sql,
                      const std::function<bool(RowBinaryReader&)>& row) {
  auto result = client->Query(sql + " FORMAT RowBinary");
  if (!result.ok()) return result.status();
  RowBinaryReader reader(*result);
  while (!reader.done()) {
    if (!row(reader)) {
      return absl::DataLossError(
          absl::StrCat("ClickHouse sent a row this build cannot read for: ",
                       sql.substr(0, 120)));
    }
  }
  return absl::OkStatus();
}

}  // namespace clickhouse
}  // namespace meridian
