// The SQLite API as the extension sees it: in a file that includes this,
// every sqlite3_* call goes through the routines the host's SQLite hands the
// extension when it is loaded (sqlite3ext.h), so the tables work in any
// program that loads them (the sqlite3 shell, Python's sqlite3), whichever
// SQLite it carries. The store that the tables read through (store/) opens
// its own connection with the libsqlite3 it links.
#ifndef MERIDIAN_QUERY_SQL_SQLITE_API_H_
#define MERIDIAN_QUERY_SQL_SQLITE_API_H_

#include <sqlite3ext.h>

SQLITE_EXTENSION_INIT3

#endif  // MERIDIAN_QUERY_SQL_SQLITE_API_H_
