// SpoolFiles: the file system calls the spool's writes make (Spool::Append,
// Remove, and Open's cleanup), behind one interface, as LevelDB's Env is:
// the real calls by default, and in tests a layer that fails any one of
// them (spool_test.cc: each write, fdatasync, close, rename, directory
// fsync and unlink failing in turn, and the spool checked after each).
//
// Contract: each method is the POSIX call of its name (the *At forms
// relative to a directory descriptor), returning what it returns and
// setting errno as it does. Thread-safe where the calls are.
#ifndef MERIDIAN_AGENT_SPOOL_FILES_H_
#define MERIDIAN_AGENT_SPOOL_FILES_H_

#include <sys/types.h>

#include <cstddef>

namespace meridian {

class SpoolFiles {
 public:
  virtual ~SpoolFiles() = default;
  virtual int OpenAt(int dir_fd, const char* name, int flags, mode_t mode) = 0;
  virtual ssize_t Write(int fd, const void* data, size_t n) = 0;
  virtual int Fdatasync(int fd) = 0;
  virtual int Close(int fd) = 0;
  virtual int RenameAt(int dir_fd, const char* from, const char* to) = 0;
  virtual int Fsync(int fd) = 0;
  virtual int UnlinkAt(int dir_fd, const char* name) = 0;

  // The real calls (one object for the process, never destroyed).
  static SpoolFiles* Posix();
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_SPOOL_FILES_H_
