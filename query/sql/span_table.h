// The `spans` table of the SQLite extension (docs/sql.md): every span of
// every job in the store, one row each, read from the stored chunks in
// place, read-only.
//
// Columns: job, rank, node, pid, tid, track, category, name, start_ns,
// dur_ns, end_ns, bytes, peer, tag, comm, seq, step, args (JSON text),
// raw_start_ns, kind, value. start_ns, dur_ns and end_ns are on the job's
// corrected time axis, as `meridian export` places spans (the stored clock
// solution, or one solved when the first row needs it); raw_start_ns is the
// node's own clock as recorded.
//
// The planner's constraints on job (=), rank, step, start_ns and
// raw_start_ns (=, <, <=, >, >=), track, name and pid (=) are handed down
// (xBestIndex, with costs that fall with each, so that joins drive the scan
// by them): only chunks of the tracks and of the time and step ranges that
// can match are decoded. SQLite checks every constraint again on the rows
// given, so handing one down only saves work. meridian_scan_stats() tells
// what the connection's last scan read.
#ifndef MERIDIAN_QUERY_SQL_SPAN_TABLE_H_
#define MERIDIAN_QUERY_SQL_SPAN_TABLE_H_

#include "query/sql/sql_session.h"
#include "query/sql/sqlite_api.h"

namespace meridian {

// Registers the module "meridian_spans" on `db`; its tables read through
// `session`, which must outlive them. An SQLite result code.
int RegisterSpanModule(sqlite3* db, SqlSession* session);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_SQL_SPAN_TABLE_H_
