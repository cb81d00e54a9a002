// The tables SQL over a store reads (docs/sql.md), added to one SQLite
// connection whose main database is a Meridian store: the virtual tables
// `spans` (span_table.h) and `steps` (step_table.h), the views `jobs`,
// `processes`, `tracks` and `counters`, and the functions
// meridian_scan_stats() and meridian_may_read(job). All go into the
// connection's temp schema, which names resolve in before the store's own
// tables (those stay readable as main.jobs, main.chunks, ...). Nothing is
// written to the store.
//
// The loadable extension (extension.cc) adds them to whatever connection
// loads it; the collector's `meridian sql` (sql_query.h) to a connection of
// its own, with `session` scoped to the jobs the caller may read.
#ifndef MERIDIAN_QUERY_SQL_TABLES_H_
#define MERIDIAN_QUERY_SQL_TABLES_H_

#include <functional>
#include <memory>

#include "query/sql/sql_session.h"
#include "query/sql/sqlite_api.h"

namespace meridian {

// The store schema the tables read (store/sqlite_schema.cc).
inline constexpr int kSqlStoreSchema = 8;

// How `jobs`, `processes` and `tracks` are made: views over the store's
// tables (the extension's), or, with `copies`, temp tables filled now with
// the rows the session may read (`meridian sql`'s: its authorizer then
// refuses every read of the store's own tables, which a view's reads are
// not told apart from); with `wanted` set, only those it names (a
// statement that does not name a table cannot read it).
struct TableForms {
  bool copies = false;
  std::function<bool(const char* name)> wanted;
};

// Adds the tables to `db`, reading through `session`, which the connection
// then owns (deleted when it closes). An SQLite result code; `error` (if
// set, sqlite3_malloc'd) says what failed.
int AddMeridianTables(sqlite3* db, std::unique_ptr<SqlSession> session,
                      char** error, const TableForms& forms = {});

// The store's schema version in `db`'s main database; -1 if it is not a
// Meridian store.
int MeridianStoreSchema(sqlite3* db);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_SQL_TABLES_H_
