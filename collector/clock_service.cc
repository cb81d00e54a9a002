#include "collector/clock_service.h"

#include <time.h>

#include <cstdint>

namespace meridian {
namespace {

int64_t RealtimeNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

}  // namespace

grpc::Status ClockService::Now(grpc::ServerContext* context,
                               const v1::NowRequest* request,
                               v1::NowReply* reply) {
  if (grpc::Status may = auth_->CheckAny(*context, Scope::kWrite); !may.ok()) {
    return may;
  }
  reply->set_server_recv_ns(RealtimeNs());
  reply->set_client_send_ns(request->client_send_ns());
  reply->set_server_send_ns(RealtimeNs());
  return grpc::Status::OK;
}

}  // namespace meridian
