// Path names: what an imported file's name and directory say to a reader
// (a node's default name, BytePS's local rank, Bluefog's rank), and the
// files the CLI writes into a directory the user names.
#ifndef MERIDIAN_IMPORT_PATHS_H_
#define MERIDIAN_IMPORT_PATHS_H_

#include <string>
#include <string_view>

namespace meridian {

// The file name of `path`, and its directory ("" if none; "/" for a file
// at the root).
std::string PathBaseName(std::string_view path);
std::string PathDirName(std::string_view path);

// `name` in directory `dir`, with one slash between whatever slashes `dir`
// ends with: ("out/", "a.json") -> "out/a.json"; ("/", "a") -> "/a";
// ("", "a") -> "a".
std::string PathJoin(std::string_view dir, std::string_view name);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_PATHS_H_
