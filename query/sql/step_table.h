// The `steps` table of the SQLite extension (docs/sql.md): one row per
// rank and step of each job whose spans carry steps, as `meridian steps`
// gives them: job, rank, step, start_ns, dur_ns, end_ns (the rank's first
// start and last end in the step, on the corrected axis), compute_ns,
// communication_ns, overlap_ns and setup_ns. Made from the job's step
// summaries (query/analysis/step_summaries.h): those stored with the job,
// and any it lacks made for the query, not stored. A constraint job = J
// reads that job only. Read-only.
#ifndef MERIDIAN_QUERY_SQL_STEP_TABLE_H_
#define MERIDIAN_QUERY_SQL_STEP_TABLE_H_

#include "query/sql/sql_session.h"
#include "query/sql/sqlite_api.h"

namespace meridian {

// Registers the module "meridian_steps" on `db`, reading through `session`
// (which must outlive its tables). An SQLite result code.
int RegisterStepModule(sqlite3* db, SqlSession* session);

}  // namespace meridian

#endif  // MERIDIAN_QUERY_SQL_STEP_TABLE_H_
