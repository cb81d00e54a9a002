// CollectorTarget: the collector `meridian` calls, and how long each call
// may wait (--request-timeout, docs/cli.md "Timeouts").
//
// A call with one answer gets a gRPC deadline of --request-timeout from
// its start (SetRequestDeadline). A streamed call (an export's chunks, an
// import's acknowledgements, graph and replay traces) may rightly last
// longer than that in all, so it gets an IdleDeadline instead
// (net/idle_deadline.h): it fails when --request-timeout passes with no
// part of the answer. Either way a collector that takes the connection and
// never answers holds a command no longer than --request-timeout.
//
// CallFailed says why a call failed in the words a user can act on.
#ifndef MERIDIAN_CLI_COLLECTOR_CALL_H_
#define MERIDIAN_CLI_COLLECTOR_CALL_H_

#include <string>

#include "absl/time/time.h"
#include "cli/command_tree.h"
#include "grpcpp/grpcpp.h"

namespace meridian {

struct CollectorTarget {
  std::string address;  // HOST:PORT
  int request_timeout_s = kDefaultRequestTimeoutS;

  absl::Duration request_timeout() const {
    return absl::Seconds(request_timeout_s);
  }
};

// Sets `context`'s deadline to --request-timeout from now.
void SetRequestDeadline(const CollectorTarget& collector,
                        grpc::ClientContext* context);

// Why a call of command `what` failed, as a line for stderr:
//   UNAVAILABLE        meridian: jobs: cannot reach the collector at ADDR
//                      (...); is meridian-collector running there?
//                      (--collector HOST:PORT)
//   DEADLINE_EXCEEDED  meridian: jobs: the collector at ADDR did not answer
//                      within 600 s (--request-timeout)
//   `idle_expired`     meridian: export: the collector at ADDR sent nothing
//                      for 600 s (--request-timeout)
//   otherwise          meridian: jobs: MESSAGE (the collector's)
std::string CallFailure(const std::string& what, const grpc::Status& status,
                        const CollectorTarget& collector,
                        bool idle_expired = false);

// Prints CallFailure on stderr and returns 1 (the command's exit status).
int CallFailed(const std::string& what, const grpc::Status& status,
               const CollectorTarget& collector, bool idle_expired = false);

}  // namespace meridian

#endif  // MERIDIAN_CLI_COLLECTOR_CALL_H_
