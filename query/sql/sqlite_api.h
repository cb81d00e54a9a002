// The SQLite API as the tables see it. Built into the loadable extension
// (:tables), every sqlite3_* call in a file that includes this goes through
// the routines the host's SQLite hands the extension when it is loaded
// (sqlite3ext.h), so the tables work in any program that loads them (the
// sqlite3 shell, Python's sqlite3), whichever SQLite it carries. Built into
// the collector (:tables_in_process, SQLITE_CORE defined), the calls are
// the libsqlite3 it links, as sqlite3ext.h then leaves them. The store that
// the tables read through (store/) opens its own connection either way.
#ifndef MERIDIAN_QUERY_SQL_SQLITE_API_H_
#define MERIDIAN_QUERY_SQL_SQLITE_API_H_

#include <sqlite3ext.h>

SQLITE_EXTENSION_INIT3

#endif  // MERIDIAN_QUERY_SQL_SQLITE_API_H_
