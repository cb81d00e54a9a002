// RunSql: one statement of `meridian sql` (the Query service's Sql RPC,
// docs/sql.md), run over the tables of tables.h on a connection of its own
// to the store file, read-only. The caller's SQL is hostile until run:
//   - scope: the tables show only the jobs `may_read` allows (the caller's
//     token) and, if the request names one, that job;
//   - read-only: an authorizer lets a statement select, read the tables of
//     tables.h (and, through their views, the store tables behind them),
//     call functions other than load_extension, and recurse; anything else
//     (ATTACH, PRAGMA, writes, transactions, reads of main.* tables) is
//     refused when the statement is prepared, saying what was refused;
//     PRAGMA query_only and a read-only connection stand behind it;
//   - one statement: text after the first is refused;
//   - bounds: rows (the request's max_rows, at most SqlLimits::max_rows_cap),
//     reply bytes, time and SQLite memory; a statement past one is stopped
//     (SQLite's progress handler) and answered RESOURCE_EXHAUSTED naming
//     the bound (not DEADLINE_EXCEEDED, which a client takes for its own);
//     CANCELLED once `cancelled` (if set) says so (the client went away).
// Thread-compatible: each call is independent.
#ifndef MERIDIAN_QUERY_SQL_SQL_QUERY_H_
#define MERIDIAN_QUERY_SQL_SQL_QUERY_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "meridian/v1/query.pb.h"

namespace meridian {

struct SqlLimits {
  int64_t default_rows = 10000;  // a request's max_rows 0
  int64_t max_rows_cap = 1000000;
  int64_t max_reply_bytes = int64_t{64} << 20;
  absl::Duration timeout = absl::Seconds(30);
  // Stops the statement earlier than `timeout` from its start, if set
  // (RunSqlOnCopy: the time its copy left); errors still name `timeout`.
  absl::Time deadline = absl::InfiniteFuture();
  // SQLite's heap (all of the process's connections) may grow this much
  // while the statement runs: sorts and groups of a hostile query.
  int64_t max_memory_bytes = int64_t{512} << 20;
  // A store that is not a SQLite file (ClickHouse) is queried on a copy of
  // the job (sql_copy.h): a job of more spans is refused.
  int64_t max_copy_spans = 10000000;
};

absl::StatusOr<v1::SqlReply> RunSql(
    const std::string& store_path, const v1::SqlRequest& request,
    const SqlLimits& limits,
    const std::function<bool(const std::string& job)>& may_read,
    std::function<bool()> cancelled = nullptr);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_SQL_SQL_QUERY_H_
