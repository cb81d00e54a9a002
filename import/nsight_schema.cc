#include "import/nsight_schema.h"

#include <iterator>

#include "absl/strings/match.h"

namespace meridian {
namespace nsight {

std::vector<stranger_sqlite::Column> GpuColumns(
    const std::vector<stranger_sqlite::Column>& more) {
  std::vector<stranger_sqlite::Column> columns(std::begin(kGpuColumns),
                                               std::end(kGpuColumns));
  columns.insert(columns.end(), more.begin(), more.end());
  return columns;
}

std::string CopyName(int64_t kind) {
  static const char* const kNames[] = {
      "Memcpy",      "Memcpy HtoD", "Memcpy DtoH", "Memcpy HtoA",
      "Memcpy AtoH", "Memcpy AtoA", "Memcpy AtoD", "Memcpy DtoA",
      "Memcpy DtoD", "Memcpy HtoH", "Memcpy PtoP"};
  if (kind >= 0 && kind < 11) return kNames[kind];
  if (kind >= 11 && kind <= 13) return "Memcpy UVM";
  return "Memcpy";
}

std::string MemoryName(int64_t kind) {
  static const char* const kNames[] = {
      "unknown", "pageable", "pinned",        "device",
      "array",   "managed",  "device_static", "managed_static"};
  return kind >= 0 && kind < 8 ? kNames[kind] : "unknown";
}

std::string RuntimeName(std::string name) {
  if (!absl::StartsWith(name, "cuda")) return name;
  const size_t v = name.rfind("_v");
  if (v == std::string::npos || v + 2 == name.size()) return name;
  for (size_t i = v + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  name.resize(v);
  return name;
}

}  // namespace nsight
}  // namespace meridian
