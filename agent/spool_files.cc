#include "agent/spool_files.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

namespace meridian {
namespace {

class PosixSpoolFiles final : public SpoolFiles {
 public:
  int OpenAt(int dir_fd, const char* name, int flags, mode_t mode) override {
    return openat(dir_fd, name, flags, mode);
  }
  ssize_t Write(int fd, const void* data, size_t n) override {
    return write(fd, data, n);
  }
  int Fdatasync(int fd) override { return fdatasync(fd); }
  int Close(int fd) override { return close(fd); }
  int RenameAt(int dir_fd, const char* from, const char* to) override {
    return renameat(dir_fd, from, dir_fd, to);
  }
  int Fsync(int fd) override { return fsync(fd); }
  int UnlinkAt(int dir_fd, const char* name) override {
    return unlinkat(dir_fd, name, 0);
  }
};

}  // namespace

SpoolFiles* SpoolFiles::Posix() {
  static PosixSpoolFiles* files = new PosixSpoolFiles();
  return files;
}

}  // namespace meridian
