// SilentCollector: a collector that takes connections and never answers,
// for tests of the deadlines of the agent and the CLI (docs/agent.md,
// "Deadlines"; docs/cli.md, --request-timeout). Two kinds:
//
//   kTcp   a TCP listener on 127.0.0.1 that accepts every connection, reads
//          and discards what arrives and never writes: a client's HTTP/2
//          handshake never completes, so its calls wait in gRPC's queue;
//   kGrpc  a real gRPC server that accepts every call of every method (one
//          generic service) and never answers one: no reply, no message of
//          a stream read or written, no status. The HTTP/2 connection is
//          live; only the calls hang.
//
// Both run on their own threads until destroyed; the destructor cancels
// the calls held open and closes the connections. Thread-safe.
#ifndef MERIDIAN_TESTING_SILENT_COLLECTOR_H_
#define MERIDIAN_TESTING_SILENT_COLLECTOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace meridian {

class SilentCollector {
 public:
  enum class Kind { kTcp, kGrpc };

  static absl::StatusOr<std::unique_ptr<SilentCollector>> Start(Kind kind);
  virtual ~SilentCollector() = default;

  // HOST:PORT, a free loopback port.
  virtual const std::string& address() const = 0;

  // Blocks until `method` ("/meridian.v1.Ingest/Stream"; for kTcp, "" for
  // a connection) has been called (accepted) `count` times in all; false if
  // that has not happened within `timeout`.
  virtual bool WaitFor(const std::string& method, int count,
                       absl::Duration timeout) = 0;

  // The methods called so far, in order (kTcp: one "" per connection).
  virtual std::vector<std::string> calls() const = 0;
};

const char* KindName(SilentCollector::Kind kind);

}  // namespace meridian

#endif  // MERIDIAN_TESTING_SILENT_COLLECTOR_H_
