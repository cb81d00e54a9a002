// SqliteStore's schema, its upgrades from earlier versions, and opening a
// store (sqlite_store.h).
#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "store/sqlite_store.h"
#include "store/sqlite_store_parts.h"

namespace meridian {
namespace {

// Version 3: spans are stored as columnar chunks (wire/span_chunk.h), one
// row per chunk. Version 2 (a row per span) and earlier are refused with a
// message: their spans would have to be rewritten.
constexpr int kSchemaVersion = 8;

// Version 3 kept one clock model per (node, reference_ns), whoever sent it;
// version 4 keys them by the agent that sent them and records which agents
// delivered each job's spans. A version 3 store is upgraded in place.
constexpr const char* kUpgrade3To4 = R"sql(
BEGIN IMMEDIATE;
CREATE TABLE agent_clock_models(
  agent TEXT NOT NULL, node INTEGER NOT NULL, reference_ns INTEGER NOT NULL,
  offset_ns INTEGER NOT NULL, drift_ppb INTEGER NOT NULL,
  uncertainty_ns INTEGER NOT NULL,
  PRIMARY KEY(agent, node, reference_ns)) WITHOUT ROWID;
INSERT INTO agent_clock_models SELECT agent, node, reference_ns, offset_ns,
  drift_ppb, uncertainty_ns FROM clock_models;
DROP TABLE clock_models;
CREATE TABLE job_agents(
  job INTEGER NOT NULL, agent TEXT NOT NULL,
  PRIMARY KEY(job, agent)) WITHOUT ROWID;
UPDATE meta SET value=4 WHERE key='schema_version';
COMMIT;
)sql";

// Version 5 records each process's world size (the ranks its launcher
// started), so that a job with lost ranks shows as incomplete.
constexpr const char* kUpgrade4To5 = R"sql(
BEGIN IMMEDIATE;
ALTER TABLE processes ADD COLUMN world_size INTEGER NOT NULL DEFAULT 0;
UPDATE meta SET value=5 WHERE key='schema_version';
COMMIT;
)sql";

// Version 6 keeps an imported process's resource use (mpitrace's user and
// system time, memory and context switches), NULL where the tool gave none.
constexpr const char* kUpgrade5To6 = R"sql(
BEGIN IMMEDIATE;
ALTER TABLE process_totals ADD COLUMN user_ns INTEGER;
ALTER TABLE process_totals ADD COLUMN system_ns INTEGER;
ALTER TABLE process_totals ADD COLUMN max_rss_bytes INTEGER;
ALTER TABLE process_totals ADD COLUMN context_switches INTEGER;
UPDATE meta SET value=6 WHERE key='schema_version';
COMMIT;
)sql";

// Version 7 counts each job's stored bytes (its chunks), for the job list,
// and keeps when it was last written, which ages a job of statistics only
// (no span end) for retention; an older store's jobs are counted, and taken
// as written, at the upgrade.
constexpr const char* kUpgrade6To7 = R"sql(
BEGIN IMMEDIATE;
ALTER TABLE jobs ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0;
UPDATE jobs SET bytes=(SELECT ifnull(sum(length(data)), 0) FROM chunks
  WHERE chunks.job=jobs.id);
ALTER TABLE jobs ADD COLUMN written_ns INTEGER NOT NULL DEFAULT 0;
UPDATE jobs SET written_ns=CAST(strftime('%s', 'now') AS INTEGER) * 1000000000;
UPDATE meta SET value=7 WHERE key='schema_version';
COMMIT;
)sql";

// Version 8 keeps the records each process's probe dropped (the largest
// count its agent reported), so that a job's lost spans show where users
// look (`meridian jobs`, the web page, exports).
constexpr const char* kUpgrade7To8 = R"sql(
BEGIN IMMEDIATE;
ALTER TABLE processes ADD COLUMN dropped INTEGER NOT NULL DEFAULT 0;
UPDATE meta SET value=8 WHERE key='schema_version';
COMMIT;
)sql";

// Everything is created in one transaction, so a store is either complete or
// absent. Comments on every column: docs/wire-and-store.md.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS strings(id INTEGER PRIMARY KEY, s TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS jobs(
  id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, epoch_ns INTEGER NOT NULL,
  min_start_ns INTEGER NOT NULL, max_end_ns INTEGER NOT NULL,
  max_dur_ns INTEGER NOT NULL, max_chunk_ns INTEGER NOT NULL,
  spans INTEGER NOT NULL, chunks INTEGER NOT NULL,
  bytes INTEGER NOT NULL DEFAULT 0, written_ns INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS processes(
  id INTEGER PRIMARY KEY, job INTEGER NOT NULL, node INTEGER NOT NULL,
  rank INTEGER NOT NULL, local_rank INTEGER NOT NULL, pid INTEGER NOT NULL,
  world_size INTEGER NOT NULL DEFAULT 0,
  dropped INTEGER NOT NULL DEFAULT 0,
  UNIQUE(job, node, pid, rank, local_rank));
CREATE TABLE IF NOT EXISTS tracks(
  id INTEGER PRIMARY KEY, process INTEGER NOT NULL, kind INTEGER NOT NULL,
  ext_id INTEGER NOT NULL, name INTEGER NOT NULL,
  UNIQUE(process, kind, ext_id));
CREATE TABLE IF NOT EXISTS ops(
  id INTEGER PRIMARY KEY, category INTEGER NOT NULL, name INTEGER NOT NULL,
  UNIQUE(category, name));
CREATE TABLE IF NOT EXISTS batches(
  agent TEXT NOT NULL, seq INTEGER NOT NULL, spans INTEGER NOT NULL,
  stored_at_ns INTEGER NOT NULL, PRIMARY KEY(agent, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS agent_clock_models(
  agent TEXT NOT NULL, node INTEGER NOT NULL, reference_ns INTEGER NOT NULL,
  offset_ns INTEGER NOT NULL, drift_ppb INTEGER NOT NULL,
  uncertainty_ns INTEGER NOT NULL,
  PRIMARY KEY(agent, node, reference_ns)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS job_agents(
  job INTEGER NOT NULL, agent TEXT NOT NULL,
  PRIMARY KEY(job, agent)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chunks(
  id INTEGER PRIMARY KEY, job INTEGER NOT NULL, track INTEGER NOT NULL,
  first_start INTEGER NOT NULL, max_end INTEGER NOT NULL,
  count INTEGER NOT NULL, min_step INTEGER, max_step INTEGER,
  data BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_by_time ON chunks(job, first_start);
CREATE TABLE IF NOT EXISTS op_totals(
  process INTEGER NOT NULL, op INTEGER NOT NULL, calls INTEGER NOT NULL,
  bytes INTEGER NOT NULL, dur_ns INTEGER NOT NULL,
  PRIMARY KEY(process, op)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS op_size_totals(
  process INTEGER NOT NULL, op INTEGER NOT NULL, log2 INTEGER NOT NULL,
  calls INTEGER NOT NULL, bytes INTEGER NOT NULL, dur_ns INTEGER NOT NULL,
  PRIMARY KEY(process, op, log2)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS process_totals(
  process INTEGER PRIMARY KEY, comm_ns INTEGER NOT NULL,
  elapsed_ns INTEGER NOT NULL, source INTEGER NOT NULL, user_ns INTEGER,
  system_ns INTEGER, max_rss_bytes INTEGER, context_switches INTEGER);
CREATE TABLE IF NOT EXISTS clock_solutions(
  job INTEGER PRIMARY KEY, spans INTEGER NOT NULL, written_ns INTEGER NOT NULL,
  models INTEGER NOT NULL, solved_ns INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS summary_states(
  job INTEGER PRIMARY KEY, spans INTEGER NOT NULL, written_ns INTEGER NOT NULL,
  models INTEGER NOT NULL, computed_ns INTEGER NOT NULL, data BLOB NOT NULL);
-- Clock evidence was a second copy of every MPI span (three times the
-- spans' own bytes); solves now read the chunks (docs/clocks.md).
DROP TABLE IF EXISTS clock_evidence;
CREATE TABLE IF NOT EXISTS step_summaries(
  job INTEGER NOT NULL, step INTEGER NOT NULL, data BLOB NOT NULL,
  PRIMARY KEY(job, step)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ring_marks(
  incarnation INTEGER NOT NULL, ring INTEGER NOT NULL, end_record INTEGER NOT NULL,
  PRIMARY KEY(incarnation, ring)) WITHOUT ROWID;
)sql";

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteStore>> SqliteStore::Open(
    const std::string& path, StoreOptions options) {
  const std::string named = options.name_in_errors.empty()
                                ? absl::StrCat("store ", path)
                                : options.name_in_errors;
  sqlite3* db = nullptr;
  int flags = options.read_only ? SQLITE_OPEN_READONLY
                                : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  flags |= SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return absl::UnavailableError(
        absl::StrCat("cannot open ", named, ": ", message));
  }
  std::unique_ptr<SqliteStore> store(
      new SqliteStore(db, path, named, options.max_cached_ids));
  // Waits rather than fails while another connection holds a lock briefly.
  sqlite3_busy_timeout(db, 10000);
  if (absl::Status status = store->RefuseOlderVersion(); !status.ok()) {
    return status;
  }
  if (!options.read_only) {
    absl::Status status =
        store->Exec(options.full_sync ? "PRAGMA journal_mode=WAL;"
                                        "PRAGMA synchronous=FULL;"
                                      : "PRAGMA journal_mode=WAL;"
                                        "PRAGMA synchronous=NORMAL;");
    if (!status.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          status.message(), " (is it a Meridian store, SQLite 3?)"));
    }
    std::string create =
        absl::StrCat("BEGIN IMMEDIATE;", kSchema,
                     "INSERT OR IGNORE INTO meta VALUES('schema_version', ",
                     kSchemaVersion, ");COMMIT;");
    status = store->Exec(create.c_str());
    if (!status.ok()) {
      store->Exec("ROLLBACK;").IgnoreError();
      return status;
    }
  }
  auto version =
      store->Prepare("SELECT value FROM meta WHERE key='schema_version'");
  if (!version.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " is not a Meridian store: ", version.status().message()));
  }
  int rc = (*version)->Step();
  int64_t found = rc == SQLITE_ROW ? (*version)->Int(0) : -1;
  (*version)->Reset();
  if (found != kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " has store schema version ", found,
                     "; this Meridian reads version ", kSchemaVersion));
  }
  return store;
}

// A store written by an older Meridian is left untouched: this build would
// otherwise add its tables beside the old ones and show none of its spans.
absl::Status SqliteStore::RefuseOlderVersion() {
  sqlite3_stmt* stmt = nullptr;
  int64_t version = 0;
  if (sqlite3_prepare_v2(db_,
                         "SELECT value FROM meta WHERE key='schema_version'",
                         -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    version = sqlite3_column_int64(stmt, 0);
  }
  sqlite3_finalize(stmt);  // no meta table yet: a new store
  if (version == 0 || version == kSchemaVersion) return absl::OkStatus();
  // Upgraded in place, one version at a time, each in one transaction.
  constexpr const char* kUpgrades[] = {kUpgrade3To4, kUpgrade4To5, kUpgrade5To6,
                                       kUpgrade6To7, kUpgrade7To8};
  for (; version >= 3 && version < kSchemaVersion; ++version) {
    absl::Status status = Exec(kUpgrades[version - 3]);
    if (!status.ok()) {
      Exec("ROLLBACK;").IgnoreError();
      return absl::FailedPreconditionError(absl::StrCat(
          path_, " has store schema version ", version, "; upgrading it to ",
          version + 1, " failed (", status.message(),
          "). Open it once with a collector, which may write it"));
    }
    if (version + 1 == kSchemaVersion) return absl::OkStatus();
  }
  if (version < kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        path_, " has store schema version ", version,
        " (one row per span, Meridian before chunked storage); this "
        "Meridian reads version ",
        kSchemaVersion,
        ". Read it with the Meridian that wrote it (meridian export), or "
        "give this collector a new --db file"));
  }
  return absl::FailedPreconditionError(
      absl::StrCat(path_, " has store schema version ", version,
                   ", newer than this Meridian reads (", kSchemaVersion,
                   "): use a newer Meridian"));
}

}  // namespace meridian
