// FaultyVfs: a SQLite VFS over the default one that fails a chosen write,
// sync or truncate of any file SQLite opens (the database, its WAL and
// journals), so that a test can make the store's durable writes fail at
// every point, as LevelDB's fault_injection_test does with its Env.
//
// Contract:
//   - Install() registers it once, as the process's default VFS: every
//     sqlite3_open after it (SqliteStore::Open's included) goes through it.
//     Until `fail_at` is set, every call is the default VFS's.
//   - Each xWrite, xSync and xTruncate is counted (calls()); the one whose
//     count equals fail_at (counting from 0) fails with SQLITE_IOERR_WRITE,
//     SQLITE_IOERR_FSYNC or SQLITE_IOERR_TRUNCATE and does nothing; the
//     others are passed on. The kind of each call is logged (kinds()).
//   - For tests: the counters are not synchronised (one writer thread).
#ifndef MERIDIAN_TESTING_FAULTY_VFS_H_
#define MERIDIAN_TESTING_FAULTY_VFS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace meridian {

class FaultyVfs {
 public:
  static FaultyVfs& Install();

  void FailAt(int64_t call) { fail_at_ = call; }
  int64_t calls() const { return calls_; }
  // "write", "sync" or "truncate", per call, in order.
  const std::vector<std::string>& kinds() const { return kinds_; }

  // The VFS's methods' hook: true if this call is to fail.
  bool Fails(const char* kind);

 private:
  FaultyVfs() = default;
  int64_t fail_at_ = -1;
  int64_t calls_ = 0;
  std::vector<std::string> kinds_;
};

}  // namespace meridian

#endif  // MERIDIAN_TESTING_FAULTY_VFS_H_
