// RunSqlOnCopy: `meridian sql` over a store that is not a SQLite file (a
// ClickHouse store, docs/sql.md). The tables of tables.h read a SQLite
// store's chunks in place; here the request's job is first copied
// (store_copy.h) into a temporary SQLite store, in a directory of its own
// (mkdtemp under `tmp_dir`, mode 0700: other users of the machine cannot
// read or swap it), RunSql runs over that copy as over the collector's own
// store, and the directory is removed whatever the outcome.
//
// Contract:
//   - The request must name a job (INVALID_ARGUMENT otherwise: a copy of
//     every job is not made); one that `may_read` refuses, or that does not
//     exist, is not copied, and the tables then show no job, as RunSql
//     shows a job it may not read.
//   - Bounds: a job of more than limits.max_copy_spans spans is refused
//     before anything is copied (RESOURCE_EXHAUSTED naming the bound); the
//     copy counts against limits.timeout (checked before each node's clock
//     models and every 20,000 spans; a request to the store in progress
//     runs to its end), and RunSql gets the time left; `cancelled` stops
//     either. Every other bound, refusal and answer is RunSql's.
//   - Copies a collector left behind (it died while copying: nothing else
//     removes them) are removed by the next call: `tmp_dir`'s
//     meridian-sql-* directories of this user an hour old.
//   - The copy's own ids and sizes are what `jobs.job_id`, `chunks` and
//     `stored_bytes` show; every span, its corrected time (the same clock
//     models, solved the same way), and every step are the job's.
#ifndef MERIDIAN_QUERY_SQL_SQL_COPY_H_
#define MERIDIAN_QUERY_SQL_SQL_COPY_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "meridian/v1/query.pb.h"
#include "query/sql/sql_query.h"
#include "store/store.h"

namespace meridian {

absl::StatusOr<v1::SqlReply> RunSqlOnCopy(
    Store& from, const std::string& tmp_dir, const v1::SqlRequest& request,
    const SqlLimits& limits,
    const std::function<bool(const std::string& job)>& may_read,
    std::function<bool()> cancelled = nullptr);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_SQL_SQL_COPY_H_
