// libmeridian_sqlite.so: SQL over a Meridian store in any SQLite client
// (docs/sql.md). Loaded into a connection whose main database is a store
//   sqlite3 meridian.db
//   sqlite> .load /usr/local/lib/libmeridian_sqlite.so
//   sqlite> SELECT rank, count(*) FROM spans WHERE job = 'j' GROUP BY rank;
// it adds to the connection's temp schema, which names resolve in before
// the store's own tables: the virtual tables `spans` (span_table.h) and
// `steps` (step_table.h); the views `jobs`, `processes`, `tracks` and
// `counters`; and the function meridian_scan_stats(). The store's tables
// stay readable as main.jobs, main.chunks, ... Nothing is written to the
// store.
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "query/sql/span_table.h"
#include "query/sql/sql_session.h"
#include "query/sql/sqlite_api.h"
#include "query/sql/step_table.h"

SQLITE_EXTENSION_INIT1

namespace meridian {
namespace {

// The store schema the tables and views read (store/sqlite_schema.cc).
constexpr int kStoreSchema = 8;

constexpr const char* kTables = R"sql(
CREATE VIRTUAL TABLE temp.spans USING meridian_spans;
CREATE VIRTUAL TABLE temp.steps USING meridian_steps;
CREATE VIEW temp.jobs AS SELECT j.name AS job, j.id AS job_id,
  j.min_start_ns AS raw_start_ns, j.max_end_ns AS raw_end_ns,
  j.spans AS spans, j.chunks AS chunks, j.bytes AS stored_bytes,
  (SELECT count(DISTINCT p.rank) FROM main.processes p
    WHERE p.job = j.id AND p.rank >= 0) AS ranks,
  (SELECT count(DISTINCT p.node) FROM main.processes p
    WHERE p.job = j.id) AS nodes,
  (SELECT ifnull(max(p.world_size), 0) FROM main.processes p
    WHERE p.job = j.id) AS world_size,
  (SELECT ifnull(sum(p.dropped), 0) FROM main.processes p
    WHERE p.job = j.id) AS spans_dropped
  FROM main.jobs j;
CREATE VIEW temp.processes AS SELECT j.name AS job,
  CASE WHEN p.rank >= 0 THEN p.rank END AS rank,
  CASE WHEN p.local_rank >= 0 THEN p.local_rank END AS local_rank,
  n.s AS node, p.pid AS pid, p.world_size AS world_size,
  p.dropped AS spans_dropped
  FROM main.processes p JOIN main.jobs j ON j.id = p.job
  JOIN main.strings n ON n.id = p.node;
CREATE VIEW temp.tracks AS SELECT j.name AS job,
  CASE WHEN p.rank >= 0 THEN p.rank END AS rank, n.s AS node, p.pid AS pid,
  CASE t.kind WHEN 0 THEN 'thread' WHEN 1 THEN 'gpu_stream'
    WHEN 2 THEN 'queue' ELSE 'unknown' END AS kind,
  t.ext_id AS id, s.s AS track
  FROM main.tracks t JOIN main.processes p ON p.id = t.process
  JOIN main.jobs j ON j.id = p.job JOIN main.strings n ON n.id = p.node
  JOIN main.strings s ON s.id = t.name;
CREATE VIEW temp.counters AS SELECT job, rank, node, pid, track, name,
  start_ns AS time_ns, raw_start_ns AS raw_time_ns, value
  FROM temp.spans WHERE kind = 'counter';
)sql";

char* Message(const std::string& text) {
  return sqlite3_mprintf("%s", text.c_str());
}

// The store's schema version; -1 if the main database is not a store.
int StoreSchema(sqlite3* db) {
  sqlite3_stmt* stmt = nullptr;
  int version = -1;
  if (sqlite3_prepare_v2(db,
                         "SELECT value FROM main.meta "
                         "WHERE key = 'schema_version'",
                         -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    version = sqlite3_column_int(stmt, 0);
  }
  sqlite3_finalize(stmt);
  return version;
}

// Whether this connection has the tables already (loaded twice).
bool Loaded(sqlite3* db) {
  sqlite3_stmt* stmt = nullptr;
  bool found = false;
  if (sqlite3_prepare_v2(db,
                         "SELECT 1 FROM temp.sqlite_master WHERE "
                         "name = 'spans' AND sql LIKE '%meridian_spans%'",
                         -1, &stmt, nullptr) == SQLITE_OK) {
    found = sqlite3_step(stmt) == SQLITE_ROW;
  }
  sqlite3_finalize(stmt);
  return found;
}

void ScanStats(sqlite3_context* ctx, int, sqlite3_value**) {
  auto* session = static_cast<SqlSession*>(sqlite3_user_data(ctx));
  const SpanScanCount& c = session->last_scan();
  const std::string json = absl::StrCat(
      "{\"chunks\":", c.chunks, ",\"chunks_read\":", c.chunks_read,
      ",\"spans_decoded\":", c.spans_decoded, ",\"rows\":", c.rows, "}");
  sqlite3_result_text(ctx, json.data(), static_cast<int>(json.size()),
                      SQLITE_TRANSIENT);
}

void DeleteSession(void* session) { delete static_cast<SqlSession*>(session); }

int Init(sqlite3* db, char** error) {
  if (Loaded(db)) return SQLITE_OK;
  const int schema = StoreSchema(db);
  if (schema != kStoreSchema) {
    *error = Message(
        schema < 0
            ? "libmeridian_sqlite: the main database is not a Meridian store "
              "(open the collector's --db file, then load the extension)"
            : absl::StrCat("libmeridian_sqlite: the store is of schema ",
                           schema, "; this extension reads schema ",
                           kStoreSchema,
                           " (open it once with this version's collector to "
                           "upgrade it)"));
    return SQLITE_ERROR;
  }
  const char* file = sqlite3_db_filename(db, "main");
  auto session = std::make_unique<SqlSession>(db, file == nullptr ? "" : file);
  SqlSession* shared = session.get();
  // The function owns the session: SQLite deletes it with the connection.
  int rc = sqlite3_create_function_v2(db, "meridian_scan_stats", 0, SQLITE_UTF8,
                                      session.release(), ScanStats, nullptr,
                                      nullptr, DeleteSession);
  if (rc == SQLITE_OK) rc = RegisterSpanModule(db, shared);
  if (rc == SQLITE_OK) rc = RegisterStepModule(db, shared);
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, kTables, nullptr, nullptr, error);
  return rc;
}

}  // namespace
}  // namespace meridian

extern "C" __attribute__((visibility("default"))) int
sqlite3_meridiansqlite_init(sqlite3* db, char** error,
                            const sqlite3_api_routines* api) {
  SQLITE_EXTENSION_INIT2(api);
  return meridian::Init(db, error);
}
