// CollectorProcess: a real meridian-collector binary started for a test, on
// a free loopback port, with its store in a given file.
//
// Start() returns once the collector printed its "listening on" line (a
// blocking read of its stdout, not a sleep). Terminate() sends SIGTERM and
// returns the exit status; the destructor kills a collector still running.
#ifndef MERIDIAN_TESTS_COLLECTOR_PROCESS_H_
#define MERIDIAN_TESTS_COLLECTOR_PROCESS_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace meridian {

class CollectorProcess {
 public:
  // `listen` is HOST:PORT; port 0 picks a free one. `flags` are passed
  // after --listen and --store (a SQLite path or a clickhouse:// location).
  // `in_child`, if given, runs in the child before the exec (e.g. to enter a
  // cgroup): call Start before starting threads.
  static absl::StatusOr<CollectorProcess> Start(
      const std::string& binary, const std::string& db_path,
      const std::string& listen = "127.0.0.1:0",
      const std::vector<std::string>& flags = {},
      const std::function<void()>& in_child = nullptr);
  CollectorProcess(CollectorProcess&& other) noexcept;
  ~CollectorProcess();

  const std::string& address() const { return address_; }
  pid_t pid() const { return pid_; }
  // SIGTERM, then waits: the exit status as waitpid reports it.
  int Terminate();
  // SIGKILL (a crash, or the OOM killer), then waits.
  void Kill();

 private:
  CollectorProcess() = default;
  pid_t pid_ = -1;
  std::string address_;
};

}  // namespace meridian

#endif  // MERIDIAN_TESTS_COLLECTOR_PROCESS_H_
