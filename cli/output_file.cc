#include "cli/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace meridian {

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::Create(
    const std::string& path, std::string what) {
  const std::string partial = path + ".partial";
  // Never through a symbolic link: in a shared directory another user's
  // link would aim the write at a file of theirs choosing.
  const int fd =
      open(partial.c_str(),
           O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  FILE* file = fd >= 0 ? fdopen(fd, "wb") : nullptr;
  if (file == nullptr) {
    const int error = errno;
    if (fd >= 0) close(fd);
    return absl::UnavailableError(absl::StrCat(
        "cannot write ", partial, ": ", strerror(error),
        error == ELOOP ? " (it is a symbolic link; remove it)" : ""));
  }
  const bool gzip = absl::EndsWith(path, ".gz");
  std::unique_ptr<OutputFile> out(
      new OutputFile(path, std::move(what), file, gzip));
  // windowBits 15 + 16: a gzip header and trailer rather than zlib's.
  if (gzip && deflateInit2(&out->zstream_, 6, Z_DEFLATED, 15 + 16, 8,
                           Z_DEFAULT_STRATEGY) != Z_OK) {
    return absl::InternalError("cannot start gzip compression");
  }
  return out;
}

OutputFile::OutputFile(std::string path, std::string what, FILE* file,
                       bool gzip)
    : path_(std::move(path)),
      partial_(path_ + ".partial"),
      what_(std::move(what)),
      file_(file),
      gzip_(gzip),
      terminal_(isatty(2) != 0),
      began_(std::chrono::steady_clock::now()),
      shown_(began_) {}

OutputFile::~OutputFile() {
  if (gzip_) deflateEnd(&zstream_);
  if (file_ != nullptr) fclose(file_);
  if (!committed_) std::remove(partial_.c_str());
}

absl::Status OutputFile::Deflate(absl::string_view data, int flush) {
  zstream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zstream_.avail_in = static_cast<uInt>(data.size());
  char buffer[64 * 1024];
  do {
    zstream_.next_out = reinterpret_cast<Bytef*>(buffer);
    zstream_.avail_out = sizeof(buffer);
    const int rc = deflate(&zstream_, flush);
    if (rc == Z_STREAM_ERROR) return absl::InternalError("gzip failed");
    const size_t n = sizeof(buffer) - zstream_.avail_out;
    if (n > 0 && fwrite(buffer, 1, n, file_) != n) {
      return absl::UnavailableError(
          absl::StrCat("writing ", partial_, " failed: ", strerror(errno)));
    }
    bytes_out_ += static_cast<int64_t>(n);
  } while (zstream_.avail_out == 0);
  return absl::OkStatus();
}

absl::Status OutputFile::Write(absl::string_view data) {
  bytes_in_ += static_cast<int64_t>(data.size());
  if (gzip_) {
    // zlib takes at most 4 GiB per call; chunks are far smaller.
    if (absl::Status s = Deflate(data, Z_NO_FLUSH); !s.ok()) return s;
  } else {
    if (fwrite(data.data(), 1, data.size(), file_) != data.size()) {
      return absl::UnavailableError(
          absl::StrCat("writing ", partial_, " failed: ", strerror(errno)));
    }
    bytes_out_ += static_cast<int64_t>(data.size());
  }
  ShowProgress(false);
  return absl::OkStatus();
}

absl::Status OutputFile::Commit() {
  if (gzip_) {
    if (absl::Status s = Deflate("", Z_FINISH); !s.ok()) return s;
  }
  const bool flushed = fflush(file_) == 0 && fsync(fileno(file_)) == 0;
  const bool closed = fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    return absl::UnavailableError(
        absl::StrCat("writing ", partial_, " failed: ", strerror(errno)));
  }
  if (std::rename(partial_.c_str(), path_.c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot rename ", partial_, " to ", path_, ": ", strerror(errno)));
  }
  committed_ = true;
  ShowProgress(true);
  return absl::OkStatus();
}

void OutputFile::ShowProgress(bool last) {
  if (!terminal_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!last && now - shown_ < std::chrono::milliseconds(500)) return;
  shown_ = now;
  const double seconds =
      std::max(1e-3, std::chrono::duration<double>(now - began_).count());
  fprintf(stderr, "\r%s: %s: %.1f MB received, %.1f MB/s%s", what_.c_str(),
          path_.c_str(), bytes_in_ / 1e6, bytes_in_ / 1e6 / seconds,
          last ? "\n" : "");
}

}  // namespace meridian
