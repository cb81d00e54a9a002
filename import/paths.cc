#include "import/paths.h"

namespace meridian {

std::string PathBaseName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path
                                                     : path.substr(slash + 1));
}

std::string PathDirName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string_view::npos) return "";
  return std::string(path.substr(0, slash == 0 ? 1 : slash));
}

std::string PathJoin(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  size_t end = dir.find_last_not_of('/');
  if (end == std::string_view::npos) return "/" + std::string(name);
  return std::string(dir.substr(0, end + 1)) + "/" + std::string(name);
}

}  // namespace meridian
