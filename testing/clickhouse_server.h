// ClickHouseServer (tests): a real clickhouse-server (Debian's package) for
// the ClickHouse store's tests, started on free loopback ports with its data
// in a temporary directory, a user "meridian" with a password, and stopped
// (its directory removed) by the destructor. Never a fake: where
// clickhouse-server is not installed, Start says so and tests skip.
//
// With MERIDIAN_CLICKHOUSE_CHDB set to a libchdb.so (a current ClickHouse's
// engine; deploy/dependencies.sh installs chDB's), it starts that engine
// behind testing/chdb_front instead (HTTP only: a cluster is refused with
// FAILED_PRECONDITION, so the Distributed tests skip). tests/run.sh runs
// the ClickHouse tests both ways.
#ifndef MERIDIAN_TESTING_CLICKHOUSE_SERVER_H_
#define MERIDIAN_TESTING_CLICKHOUSE_SERVER_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "store/clickhouse_client.h"

namespace meridian {

class ClickHouseServer {
 public:
  // FAILED_PRECONDITION saying what to install if there is no
  // clickhouse-server on PATH (or in /usr/sbin); UNAVAILABLE, with the
  // server's log, if it does not answer within 60 s.
  // `config`, if given, goes into the server's configuration as it is,
  // with "{tcp_port}" replaced by the server's own native port (e.g. a
  // remote_servers cluster that includes it).
  static absl::StatusOr<std::unique_ptr<ClickHouseServer>> Start(
      const std::string& config = "");
  ~ClickHouseServer();

  // Where to connect as "meridian" (database "default").
  const ClickHouseEndpoint& endpoint() const { return endpoint_; }
  // Its native (TCP) port: what other servers' clusters name.
  int tcp_port() const { return tcp_port_; }
  // Kills the server at once (SIGKILL), as a crash would, and starts it
  // again on the same ports and data.
  absl::Status Restart();

 private:
  ClickHouseServer() = default;
  absl::Status Launch();

  std::string binary_;
  std::string chdb_library_;  // set: binary_ is testing/chdb_front
  std::string dir_;
  pid_t pid_ = -1;
  int tcp_port_ = 0;
  ClickHouseEndpoint endpoint_;
};

}  // namespace meridian

#endif  // MERIDIAN_TESTING_CLICKHOUSE_SERVER_H_
