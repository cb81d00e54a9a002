// Path names of imported files: what a file's name and directory say to a
// reader (a node's default name, BytePS's local rank, Bluefog's rank).
#ifndef MERIDIAN_IMPORT_PATHS_H_
#define MERIDIAN_IMPORT_PATHS_H_

#include <string>
#include <string_view>

namespace meridian {

// The file name of `path`, and its directory ("" if none; "/" for a file
// at the root).
std::string PathBaseName(std::string_view path);
std::string PathDirName(std::string_view path);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_PATHS_H_
