#include "import/input_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace meridian {
namespace {

absl::Status Walk(const std::string& path, std::vector<std::string>* out) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(path, ": ", strerror(errno)));
  }
  if (S_ISREG(st.st_mode)) {
    out->push_back(path);
    return absl::OkStatus();
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": neither a file nor a directory"));
  }
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": ", strerror(errno)));
  }
  std::vector<std::string> names;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;  // ., .., hidden
    names.push_back(entry->d_name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    absl::Status status = Walk(absl::StrCat(path, "/", name), out);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

// `ratio_bound`: max_bytes is the kMaxGzipRatio bound, not the caller's.
absl::Status Gunzip(const std::string& path, const std::string& in,
                    size_t max_bytes, bool ratio_bound, std::string* out) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) {  // +32: gzip or zlib header
    return absl::InternalError("zlib: inflateInit2 failed");
  }
  const Bytef* begin = reinterpret_cast<const Bytef*>(in.data());
  auto refill = [&] {
    const size_t used = z.next_in - begin;
    z.avail_in =
        static_cast<uInt>(std::min<size_t>(in.size() - used, 1u << 30));
  };
  z.next_in = const_cast<Bytef*>(begin);
  refill();
  char buffer[1 << 16];
  absl::Status status;
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof(buffer);
    const int result = inflate(&z, Z_NO_FLUSH);
    out->append(buffer, sizeof(buffer) - z.avail_out);
    if (out->size() > max_bytes) {
      status = absl::InvalidArgumentError(
          ratio_bound ? absl::StrCat(
                            path, ": decompresses to more than ", max_bytes,
                            " bytes, ", kMaxGzipRatio, " times its ", in.size(),
                            " (a gzip bomb? a trace that really compresses "
                            "that well is read once gunzipped); nothing "
                            "imported")
                      : absl::StrCat(path, ": decompresses to more than ",
                                     max_bytes, " bytes"));
      break;
    }
    const bool input_left = static_cast<size_t>(z.next_in - begin) < in.size();
    if (result == Z_STREAM_END) {
      if (!input_left) break;  // done
      inflateReset(&z);  // concatenated members (gzip a >> f; gzip b >> f)
      refill();
      continue;
    }
    if (result == Z_BUF_ERROR && !input_left) {
      status = absl::InvalidArgumentError(absl::StrCat(
          path,
          ": the gzip data is cut short (a truncated .gz); nothing "
          "imported"));
      break;
    }
    if (result != Z_OK && result != Z_BUF_ERROR) {
      status = absl::InvalidArgumentError(absl::StrCat(
          path, ": damaged gzip data (",
          z.msg != nullptr ? z.msg : "zlib error", "); nothing imported"));
      break;
    }
    if (z.avail_in == 0 && input_left) refill();
  }
  inflateEnd(&z);
  return status;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ExpandPaths(
    const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    absl::Status status = Walk(path, &out);
    if (!status.ok()) return status;
  }
  return out;
}

absl::StatusOr<InputFile> ReadInputFile(const std::string& path,
                                        size_t max_bytes,
                                        size_t gzip_floor_bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(path, ": ", strerror(errno)));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a file"));
  }
  InputFile file;
  file.path = path;
  file.mtime_ns =
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  std::string raw;
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    close(fd);
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": larger than ", max_bytes, " bytes"));
  }
  raw.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < raw.size()) {
    const ssize_t n = read(fd, raw.data() + done, raw.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  raw.resize(done);
  if (raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f &&
      static_cast<unsigned char>(raw[1]) == 0x8b) {
    file.gzip = true;
    const size_t by_ratio =
        std::max(gzip_floor_bytes, raw.size() > SIZE_MAX / kMaxGzipRatio
                                       ? SIZE_MAX
                                       : raw.size() * kMaxGzipRatio);
    absl::Status status = Gunzip(path, raw, std::min(max_bytes, by_ratio),
                                 by_ratio < max_bytes, &file.content);
    if (!status.ok()) return status;
  } else {
    file.content = std::move(raw);
  }
  return file;
}

}  // namespace meridian
