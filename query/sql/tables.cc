#include "query/sql/tables.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "query/sql/span_table.h"
#include "query/sql/step_table.h"

namespace meridian {
namespace {

constexpr const char* kVirtualTables = R"sql(
CREATE VIRTUAL TABLE temp.spans USING meridian_spans;
CREATE VIRTUAL TABLE temp.steps USING meridian_steps;
CREATE VIEW temp.counters AS SELECT job, rank, node, pid, track, name,
  start_ns AS time_ns, raw_start_ns AS raw_time_ns, value
  FROM temp.spans WHERE kind = 'counter';
)sql";

// The tables over the store's own, each a SELECT showing only the jobs the
// session may read (meridian_may_read): views, or copies (TableForms).
struct Derived {
  const char* name;
  const char* select;
};
constexpr Derived kDerived[] = {
    {"jobs", R"sql(SELECT j.name AS job, j.id AS job_id,
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
  FROM main.jobs j WHERE meridian_may_read(j.name))sql"},
    {"processes", R"sql(SELECT j.name AS job,
  CASE WHEN p.rank >= 0 THEN p.rank END AS rank,
  CASE WHEN p.local_rank >= 0 THEN p.local_rank END AS local_rank,
  n.s AS node, p.pid AS pid, p.world_size AS world_size,
  p.dropped AS spans_dropped
  FROM main.processes p JOIN main.jobs j ON j.id = p.job
  JOIN main.strings n ON n.id = p.node WHERE meridian_may_read(j.name))sql"},
    {"tracks", R"sql(SELECT j.name AS job,
  CASE WHEN p.rank >= 0 THEN p.rank END AS rank, n.s AS node, p.pid AS pid,
  CASE t.kind WHEN 0 THEN 'thread' WHEN 1 THEN 'gpu_stream'
    WHEN 2 THEN 'queue' ELSE 'unknown' END AS kind,
  t.ext_id AS id, s.s AS track
  FROM main.tracks t JOIN main.processes p ON p.id = t.process
  JOIN main.jobs j ON j.id = p.job JOIN main.strings n ON n.id = p.node
  JOIN main.strings s ON s.id = t.name WHERE meridian_may_read(j.name))sql"},
};

SqlSession* SessionOf(sqlite3_context* ctx) {
  return static_cast<SqlSession*>(sqlite3_user_data(ctx));
}

void ScanStatsJson(sqlite3_context* ctx, int, sqlite3_value**) {
  const SpanScanCount& c = SessionOf(ctx)->last_scan();
  const std::string json = absl::StrCat(
      "{\"chunks\":", c.chunks, ",\"chunks_read\":", c.chunks_read,
      ",\"spans_decoded\":", c.spans_decoded, ",\"rows\":", c.rows, "}");
  sqlite3_result_text(ctx, json.data(), static_cast<int>(json.size()),
                      SQLITE_TRANSIENT);
}

void MayRead(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const unsigned char* text = sqlite3_value_text(argv[0]);
  const std::string job = text == nullptr
                              ? std::string()
                              : std::string(reinterpret_cast<const char*>(text),
                                            sqlite3_value_bytes(argv[0]));
  sqlite3_result_int(ctx, SessionOf(ctx)->MayRead(job) ? 1 : 0);
}

void DeleteSession(void* session) { delete static_cast<SqlSession*>(session); }

}  // namespace

int MeridianStoreSchema(sqlite3* db) {
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

int AddMeridianTables(sqlite3* db, std::unique_ptr<SqlSession> session,
                      char** error, const TableForms& forms) {
  SqlSession* shared = session.get();
  // meridian_scan_stats owns the session: SQLite deletes it with the
  // connection, after the tables that use it.
  int rc = sqlite3_create_function_v2(db, "meridian_scan_stats", 0, SQLITE_UTF8,
                                      session.release(), ScanStatsJson, nullptr,
                                      nullptr, DeleteSession);
  if (rc == SQLITE_OK) {
    rc = sqlite3_create_function_v2(db, "meridian_may_read", 1,
                                    SQLITE_UTF8 | SQLITE_DETERMINISTIC, shared,
                                    MayRead, nullptr, nullptr, nullptr);
  }
  if (rc == SQLITE_OK) rc = RegisterSpanModule(db, shared);
  if (rc == SQLITE_OK) rc = RegisterStepModule(db, shared);
  if (rc == SQLITE_OK) {
    rc = sqlite3_exec(db, kVirtualTables, nullptr, nullptr, error);
  }
  for (const Derived& d : kDerived) {
    if (rc != SQLITE_OK) break;
    if (forms.copies && forms.wanted && !forms.wanted(d.name)) continue;
    const std::string sql =
        absl::StrCat(forms.copies ? "CREATE TEMP TABLE " : "CREATE VIEW temp.",
                     d.name, " AS ", d.select);
    rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, error);
  }
  return rc;
}

}  // namespace meridian
