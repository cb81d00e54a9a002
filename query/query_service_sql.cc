// QueryService::Sql: `meridian sql` (docs/sql.md) over the collector's
// store, scoped to the jobs the caller may read: in place on a SQLite store,
// on a temporary copy of the job on ClickHouse (sql_copy.h).
#include <cstdlib>

#include "query/job_query.h"
#include "query/query_service.h"
#include "query/sql/sql_copy.h"
#include "query/sql/sql_query.h"
#include "store/clickhouse_store.h"

namespace meridian {

grpc::Status QueryService::Sql(grpc::ServerContext* context,
                               const v1::SqlRequest* request,
                               v1::SqlReply* reply) {
  if (grpc::Status may = MayReadJob(context, request->job()); !may.ok()) {
    return may;
  }
  // Its SQLite memory bound, held of the queries' budget while it runs.
  const SqlLimits limits;
  auto lease = memory_->Reserve(static_cast<uint64_t>(limits.max_memory_bytes),
                                "an SQL query");
  if (!lease.ok()) return ToGrpc(lease.status());
  auto may_read = [this, context](const std::string& job) {
    return MayReadJob(context, job).ok();
  };
  auto cancelled = [context] { return context->IsCancelled(); };
  absl::StatusOr<v1::SqlReply> answer;
  if (IsClickHouseLocation(db_path_)) {
    auto store = Store::Open(db_path_, QueryStoreOptions());
    if (!store.ok()) return ToGrpc(store.status());
    const char* tmp = getenv("TMPDIR");
    answer = RunSqlOnCopy(**store, tmp != nullptr && *tmp ? tmp : "/tmp",
                          *request, limits, may_read, cancelled);
  } else {
    answer = RunSql(db_path_, *request, limits, may_read, cancelled);
  }
  if (!answer.ok()) return ToGrpc(answer.status());
  *reply = std::move(*answer);
  return grpc::Status::OK;
}

}  // namespace meridian
