// The files `meridian import` is given: paths expanded (a directory means
// the regular files under it, sorted, hidden ones skipped) and each read
// whole, gzip-compressed or not (told by its first bytes, not its name).
#ifndef MERIDIAN_IMPORT_INPUT_FILE_H_
#define MERIDIAN_IMPORT_INPUT_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace meridian {

struct InputFile {
  std::string path;
  std::string content;  // decompressed
  int64_t mtime_ns = 0;
  bool gzip = false;
};

// The files named by `paths`, in order (each directory's sorted). An
// error names a path that does not exist or cannot be read.
absl::StatusOr<std::vector<std::string>> ExpandPaths(
    const std::vector<std::string>& paths);

// Reads `path`, decompressing gzip; NOT_FOUND, or INVALID_ARGUMENT for a
// damaged or cut-short .gz and for content over `max_bytes`.
absl::StatusOr<InputFile> ReadInputFile(const std::string& path,
                                        size_t max_bytes);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_INPUT_FILE_H_
