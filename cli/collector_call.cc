#include "cli/collector_call.h"

#include <chrono>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace meridian {

void SetRequestDeadline(const CollectorTarget& collector,
                        grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(collector.request_timeout_s));
}

std::string CallFailure(const std::string& what, const grpc::Status& status,
                        const CollectorTarget& collector, bool idle_expired) {
  const std::string prefix = absl::StrCat("meridian: ", what, ": ");
  if (idle_expired) {
    return absl::StrCat(prefix, "the collector at ", collector.address,
                        " sent nothing for ", collector.request_timeout_s,
                        " s (--request-timeout)");
  }
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return absl::StrCat(prefix, "the collector at ", collector.address,
                        " did not answer within ", collector.request_timeout_s,
                        " s (--request-timeout)");
  }
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    return absl::StrCat(prefix, "cannot reach the collector at ",
                        collector.address, " (", status.error_message(),
                        "); is meridian-collector running there? "
                        "(--collector HOST:PORT)");
  }
  return prefix + status.error_message();
}

int CallFailed(const std::string& what, const grpc::Status& status,
               const CollectorTarget& collector, bool idle_expired) {
  const std::string line =
      CallFailure(what, status, collector, idle_expired) + "\n";
  fputs(line.c_str(), stderr);
  return 1;
}

}  // namespace meridian
