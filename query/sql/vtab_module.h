// What the read-only virtual tables (span_table.h, step_table.h) share:
// their module (SQLite's table of their functions) and how they fail.
#ifndef MERIDIAN_QUERY_SQL_VTAB_MODULE_H_
#define MERIDIAN_QUERY_SQL_VTAB_MODULE_H_

#include "absl/status/status.h"
#include "query/sql/sql_session.h"
#include "query/sql/sqlite_api.h"

namespace meridian {

// A read-only table's functions. xCreate is xConnect (tables.cc makes the
// tables in temp), xDestroy is xDisconnect; no xUpdate: SQLite refuses
// every write ("table T may not be modified").
struct ReadOnlyTable {
  int (*connect)(sqlite3*, void*, int, const char* const*, sqlite3_vtab**,
                 char**);
  int (*best_index)(sqlite3_vtab*, sqlite3_index_info*);
  int (*disconnect)(sqlite3_vtab*);
  int (*open)(sqlite3_vtab*, sqlite3_vtab_cursor**);
  int (*close)(sqlite3_vtab_cursor*);
  int (*filter)(sqlite3_vtab_cursor*, int, const char*, int, sqlite3_value**);
  int (*next)(sqlite3_vtab_cursor*);
  int (*eof)(sqlite3_vtab_cursor*);
  int (*column)(sqlite3_vtab_cursor*, sqlite3_context*, int);
  int (*rowid)(sqlite3_vtab_cursor*, sqlite3_int64*);
};
sqlite3_module ReadOnlyModule(const ReadOnlyTable& table);

// Fails the statement with `status` (SQLITE_ERROR, its message for
// SQLite), kept in `session` for a caller that answers with it.
int FailTable(sqlite3_vtab* vtab, SqlSession* session,
              const absl::Status& status);

// The statement's bounds were reached (SqlSession::ShouldStop).
int InterruptTable(sqlite3_vtab* vtab);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_SQL_VTAB_MODULE_H_
