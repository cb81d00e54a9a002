#include "cli/sql_report.h"

#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json.h"

namespace meridian {
namespace {

// A value as the text and CSV forms show it ("" for NULL).
std::string Shown(const v1::SqlValue& v) {
  switch (v.value_case()) {
    case v1::SqlValue::kInteger:
      return absl::StrCat(v.integer());
    case v1::SqlValue::kReal:
      return absl::StrFormat("%.17g", v.real());
    case v1::SqlValue::kText:
      return v.text();
    case v1::SqlValue::kBlob:
      return absl::StrCat("x'", absl::BytesToHexString(v.blob()), "'");
    default:
      return "";
  }
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

template <typename Field>
std::string Lines(const v1::SqlReply& reply, char separator, Field field) {
  std::string out;
  for (int i = 0; i < reply.columns_size(); ++i) {
    if (i > 0) out += separator;
    out += field(reply.columns(i));
  }
  out += "\n";
  for (const v1::SqlRow& row : reply.rows()) {
    for (int i = 0; i < row.values_size(); ++i) {
      if (i > 0) out += separator;
      out += field(Shown(row.values(i)));
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string SqlText(const v1::SqlReply& reply) {
  return Lines(reply, '|', [](const std::string& s) { return s; });
}

std::string SqlCsv(const v1::SqlReply& reply) {
  return Lines(reply, ',', CsvField);
}

std::string SqlJson(const v1::SqlReply& reply) {
  std::string out = "{\"columns\":[";
  for (int i = 0; i < reply.columns_size(); ++i) {
    if (i > 0) out += ",";
    AppendJsonString(&out, reply.columns(i));
  }
  out += "],\"rows\":[";
  for (int r = 0; r < reply.rows_size(); ++r) {
    if (r > 0) out += ",";
    out += "[";
    const v1::SqlRow& row = reply.rows(r);
    for (int i = 0; i < row.values_size(); ++i) {
      if (i > 0) out += ",";
      const v1::SqlValue& v = row.values(i);
      switch (v.value_case()) {
        case v1::SqlValue::kInteger:
          AppendJsonInt(&out, v.integer());
          break;
        case v1::SqlValue::kReal:
          AppendJsonDouble(&out, v.real());
          break;
        case v1::SqlValue::kText:
        case v1::SqlValue::kBlob:
          AppendJsonString(&out, Shown(v));
          break;
        default:
          out += "null";
      }
    }
    out += "]";
  }
  out += "]}\n";
  return out;
}

}  // namespace meridian
