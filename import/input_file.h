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

// A .gz decompresses to at most kMaxGzipRatio times its own size, or to
// `gzip_floor_bytes`, whichever is larger (and never over `max_bytes`):
// traces compress 5 to 50 times, a gzip bomb a thousand, and the parsers
// need the whole document in memory. A trace that really compresses more
// is read once gunzipped.
inline constexpr size_t kMaxGzipRatio = 100;
inline constexpr size_t kGzipFloorBytes = size_t{256} << 20;

// Reads `path`, decompressing gzip; NOT_FOUND, or INVALID_ARGUMENT for a
// damaged or cut-short .gz and for content over `max_bytes` (or, gzipped,
// over the bound above).
absl::StatusOr<InputFile> ReadInputFile(
    const std::string& path, size_t max_bytes,
    size_t gzip_floor_bytes = kGzipFloorBytes);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_INPUT_FILE_H_
