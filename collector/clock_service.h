// ClockService: meridian.v1.Clock/Now, the collector's reference clock
// (CLOCK_REALTIME, Unix-epoch ns) for agents' offset and drift estimates.
#ifndef MERIDIAN_COLLECTOR_CLOCK_SERVICE_H_
#define MERIDIAN_COLLECTOR_CLOCK_SERVICE_H_

#include <memory>
#include <utility>

#include "collector/authorizer.h"
#include "meridian/v1/clock.grpc.pb.h"

namespace meridian {

// Callers need a token with some write scope (agents).
class ClockService final : public v1::Clock::Service {
 public:
  explicit ClockService(std::shared_ptr<const Authorizer> auth)
      : auth_(std::move(auth)) {}
  grpc::Status Now(grpc::ServerContext* context, const v1::NowRequest* request,
                   v1::NowReply* reply) override;

 private:
  const std::shared_ptr<const Authorizer> auth_;
};

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_CLOCK_SERVICE_H_
