// QueryService::Sql: `meridian sql` (docs/sql.md) over the collector's
// SQLite store, scoped to the jobs the caller may read.
#include "query/query_service.h"
#include "query/sql/sql_query.h"
#include "store/clickhouse_store.h"

namespace meridian {

grpc::Status QueryService::Sql(grpc::ServerContext* context,
                               const v1::SqlRequest* request,
                               v1::SqlReply* reply) {
  if (grpc::Status may = MayReadJob(context, request->job()); !may.ok()) {
    return may;
  }
  if (IsClickHouseLocation(db_path_)) {
    return grpc::Status(grpc::StatusCode::UNIMPLEMENTED,
                        "meridian sql reads a SQLite store; this collector's "
                        "store is ClickHouse (query it with clickhouse-client: "
                        "docs/clickhouse.md)");
  }
  // Its SQLite memory bound, held of the queries' budget while it runs.
  const SqlLimits limits;
  auto lease = memory_->Reserve(static_cast<uint64_t>(limits.max_memory_bytes),
                                "an SQL query");
  if (!lease.ok()) return ToGrpc(lease.status());
  auto answer = RunSql(
      db_path_, *request, limits,
      [this, context](const std::string& job) {
        return MayReadJob(context, job).ok();
      },
      [context] { return context->IsCancelled(); });
  if (!answer.ok()) return ToGrpc(answer.status());
  *reply = std::move(*answer);
  return grpc::Status::OK;
}

}  // namespace meridian
