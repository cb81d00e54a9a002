// OutputFile: where `meridian export` writes a file: beside it first
// (NAME.partial) and renamed at Commit, so a failed or interrupted export
// leaves no partial file under the name; gzip-compressed (zlib, level 6)
// when the name ends in ".gz". NAME.partial is never opened through a
// symbolic link (a shared directory's trap). When stderr is a terminal it shows
// progress (bytes received, rate) at most twice a second.
#ifndef MERIDIAN_CLI_OUTPUT_FILE_H_
#define MERIDIAN_CLI_OUTPUT_FILE_H_

#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace meridian {

class OutputFile {
 public:
  // Creates NAME.partial (truncating one left behind). `what` prefixes
  // progress lines.
  static absl::StatusOr<std::unique_ptr<OutputFile>> Create(
      const std::string& path, std::string what);
  ~OutputFile();  // removes the partial file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  absl::Status Write(absl::string_view data);
  // Finishes compression, flushes, closes and renames to the name.
  absl::Status Commit();

  int64_t bytes_in() const { return bytes_in_; }    // as given to Write
  int64_t bytes_out() const { return bytes_out_; }  // as written (gzip)
  bool gzip() const { return gzip_; }

 private:
  OutputFile(std::string path, std::string what, FILE* file, bool gzip);
  absl::Status Deflate(absl::string_view data, int flush);
  void ShowProgress(bool last);

  const std::string path_;
  const std::string partial_;
  const std::string what_;
  FILE* file_;
  const bool gzip_;
  z_stream zstream_{};
  bool committed_ = false;
  int64_t bytes_in_ = 0;
  int64_t bytes_out_ = 0;
  const bool terminal_;
  const std::chrono::steady_clock::time_point began_;
  std::chrono::steady_clock::time_point shown_;
};

}  // namespace meridian

#endif  // MERIDIAN_CLI_OUTPUT_FILE_H_
