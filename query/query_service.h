// QueryService: meridian.v1.Query, served by the collector over its store.
//
// Each call opens its own read connection to the store file, so queries run
// concurrently with ingest (SQLite WAL) and with each other, and see every
// batch committed before they started. Errors: NOT_FOUND for an unknown job,
// INVALID_ARGUMENT for a bad filter, each with a message saying what to fix.
#ifndef MERIDIAN_QUERY_QUERY_SERVICE_H_
#define MERIDIAN_QUERY_QUERY_SERVICE_H_

#include <string>

#include "meridian/v1/query.grpc.pb.h"

namespace meridian {

class QueryService final : public v1::Query::Service {
 public:
  explicit QueryService(std::string db_path) : db_path_(std::move(db_path)) {}

  grpc::Status ListJobs(grpc::ServerContext* context,
                        const v1::ListJobsRequest* request,
                        v1::ListJobsReply* reply) override;
  grpc::Status ExportTrace(grpc::ServerContext* context,
                           const v1::ExportRequest* request,
                           grpc::ServerWriter<v1::TraceChunk>* writer) override;
  grpc::Status GetStats(grpc::ServerContext* context,
                        const v1::StatsRequest* request,
                        v1::StatsReply* reply) override;
  grpc::Status GetClocks(grpc::ServerContext* context,
                         const v1::ClocksRequest* request,
                         v1::ClocksReply* reply) override;

 private:
  std::string db_path_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_QUERY_SERVICE_H_
