// ClockService: meridian.v1.Clock/Now, the collector's reference clock
// (CLOCK_REALTIME, Unix-epoch ns) for agents' offset and drift estimates.
#ifndef MERIDIAN_COLLECTOR_CLOCK_SERVICE_H_
#define MERIDIAN_COLLECTOR_CLOCK_SERVICE_H_

#include "meridian/v1/clock.grpc.pb.h"

namespace meridian {

class ClockService final : public v1::Clock::Service {
 public:
  grpc::Status Now(grpc::ServerContext* context, const v1::NowRequest* request,
                   v1::NowReply* reply) override;
};

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_CLOCK_SERVICE_H_
