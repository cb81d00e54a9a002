#include "store/sqlite_store.h"

#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/lru_cache.h"
#include "store/chunk_merge.h"
#include "store/track_spans.h"
#include "wire/batch_spans.h"
#include "wire/batch_validator.h"
#include "wire/span_chunk.h"

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

// Running totals of a job, added to its row after each write.
struct Totals {
  int64_t min_start = std::numeric_limits<int64_t>::max();
  int64_t max_end = std::numeric_limits<int64_t>::min();
  int64_t max_dur = 0;
  int64_t max_chunk = 0;
  int64_t spans = 0;
  int64_t chunks = 0;
  int64_t bytes = 0;
};

int64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

}  // namespace

// A prepared statement, reset after every use.
class SqliteStore::Statement {
 public:
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~Statement() { sqlite3_finalize(stmt_); }

  Statement& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Statement& Bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()),
                      SQLITE_STATIC);
    return *this;
  }
  Statement& BindNull(int i) {
    sqlite3_bind_null(stmt_, i);
    return *this;
  }
  Statement& BindBlob(int i, const std::string& v) {
    if (v.empty()) {
      sqlite3_bind_null(stmt_, i);
    } else {
      sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()),
                        SQLITE_STATIC);
    }
    return *this;
  }
  Statement& BindReal(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  template <typename T>
  Statement& BindOptional(int i, bool has, T v) {
    return has ? Bind(i, static_cast<int64_t>(v)) : BindNull(i);
  }

  // Returns SQLITE_ROW, SQLITE_DONE or an error code.
  int Step() { return sqlite3_step(stmt_); }
  // Makes the statement runnable again; bindings are kept.
  void Reset() { sqlite3_reset(stmt_); }

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const { return sqlite3_column_double(stmt_, col); }
  bool IsNull(int col) const {
    return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
  }
  std::string Text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           sqlite3_column_bytes(stmt_, col))
             : std::string();
  }
  absl::string_view Blob(int col) const {
    const void* p = sqlite3_column_blob(stmt_, col);
    return p ? absl::string_view(static_cast<const char*>(p),
                                 sqlite3_column_bytes(stmt_, col))
             : absl::string_view();
  }

 private:
  sqlite3_stmt* stmt_;
};

// Id caches for interning. They mirror committed rows plus the rows of the
// open transaction, so they are dropped whenever a transaction rolls back.
// Each bounded (LRU) by StoreOptions::max_cached_ids.
struct SqliteStore::Caches {
  explicit Caches(size_t capacity)
      : string_ids(capacity),
        jobs(capacity),
        processes(capacity),
        tracks(capacity),
        ops(capacity) {}
  LruCache<std::string, int64_t> string_ids;
  LruCache<std::string, JobRef> jobs;
  // A process's id, and the largest world size and dropped count stored
  // for it.
  struct StoredProcess {
    int64_t id;
    int32_t world_size;
    int64_t dropped;
  };
  LruCache<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>,
           StoredProcess>
      processes;
  LruCache<std::tuple<int64_t, int64_t, int64_t>, int64_t> tracks;
  LruCache<std::pair<int64_t, int64_t>, int64_t> ops;
  // Scratch columns, kept to reuse their memory.
  SpanColumns wire;
  SpanColumns piece;
};

SqliteStore::SqliteStore(sqlite3* db, std::string path, std::string named,
                         size_t max_cached_ids)
    : db_(db),
      path_(std::move(path)),
      named_(std::move(named)),
      caches_(std::make_unique<Caches>(max_cached_ids)),
      max_cached_ids_(max_cached_ids) {}

SqliteStore::~SqliteStore() {
  statements_.clear();  // finalize before close
  sqlite3_close(db_);
}

absl::Status SqliteStore::Fail(const char* what) const {
  return absl::InternalError(
      absl::StrCat(what, " in ", named_, ": ", sqlite3_errmsg(db_)));
}

absl::Status SqliteStore::Exec(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    absl::Status status = absl::InternalError(
        absl::StrCat(named_, ": ", error ? error : "unknown error"));
    sqlite3_free(error);
    return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<SqliteStore::Statement*> SqliteStore::Prepare(const char* sql) {
  auto it = statement_by_sql_.find(sql);
  if (it != statement_by_sql_.end()) return it->second;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt,
                         nullptr) != SQLITE_OK) {
    return Fail("preparing a statement failed");
  }
  statements_.push_back(std::make_unique<Statement>(stmt));
  statement_by_sql_[sql] = statements_.back().get();
  return statements_.back().get();
}

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

absl::StatusOr<int64_t> SqliteStore::InternString(const std::string& s) {
  if (const int64_t* cached = caches_->string_ids.Find(s)) return *cached;
  auto insert = Prepare("INSERT OR IGNORE INTO strings(s) VALUES(?1)");
  if (!insert.ok()) return insert.status();
  int rc = (*insert)->Bind(1, s).Step();
  (*insert)->Reset();
  if (rc != SQLITE_DONE) return Fail("interning a string failed");
  int64_t id;
  if (sqlite3_changes(db_) == 1) {
    id = sqlite3_last_insert_rowid(db_);
  } else {
    auto select = Prepare("SELECT id FROM strings WHERE s=?1");
    if (!select.ok()) return select.status();
    if ((*select)->Bind(1, s).Step() != SQLITE_ROW) {
      (*select)->Reset();
      return Fail("looking up a string failed");
    }
    id = (*select)->Int(0);
    (*select)->Reset();
  }
  caches_->string_ids.Insert(s, id);
  return id;
}

absl::StatusOr<std::string> SqliteStore::LookupString(int64_t id) {
  auto it = string_by_id_.find(id);
  if (it != string_by_id_.end()) return it->second;
  auto select = Prepare("SELECT s FROM strings WHERE id=?1");
  if (!select.ok()) return select.status();
  if ((*select)->Bind(1, id).Step() != SQLITE_ROW) {
    (*select)->Reset();
    return absl::DataLossError(absl::StrCat(named_, " has no string ", id));
  }
  std::string s = (*select)->Text(0);
  (*select)->Reset();
  string_by_id_.emplace(id, s);
  return s;
}

absl::StatusOr<int64_t> SqliteStore::InsertReturningId(Statement* insert,
                                                       const char* what,
                                                       int64_t* more_columns,
                                                       int more) {
  if (insert->Step() != SQLITE_ROW) {
    insert->Reset();
    return Fail(what);
  }
  int64_t id = insert->Int(0);
  if (more_columns != nullptr) {
    for (int i = 0; i < more; ++i) more_columns[i] = insert->Int(1 + i);
  }
  insert->Step();  // SQLITE_DONE: the statement has finished
  insert->Reset();
  return id;
}

absl::StatusOr<int64_t> SqliteStore::DeleteJob(const std::string& name) {
  auto select = Prepare("SELECT id, spans FROM jobs WHERE name=?1");
  if (!select.ok()) return select.status();
  int rc = (*select)->Bind(1, name).Step();
  const int64_t id = rc == SQLITE_ROW ? (*select)->Int(0) : -1;
  const int64_t spans = rc == SQLITE_ROW ? (*select)->Int(1) : 0;
  (*select)->Reset();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return Fail("finding a job failed");
  if (id < 0) {
    return absl::NotFoundError(
        absl::StrCat("no job \"", name, "\" in ", named_));
  }
  absl::Status status = Exec("BEGIN IMMEDIATE;");
  if (!status.ok()) return status;
  for (const char* sql :
       {"DELETE FROM chunks WHERE job=?1",
        "DELETE FROM op_totals WHERE process IN (SELECT id FROM processes "
        "WHERE job=?1)",
        "DELETE FROM op_size_totals WHERE process IN (SELECT id FROM "
        "processes WHERE job=?1)",
        "DELETE FROM process_totals WHERE process IN (SELECT id FROM "
        "processes WHERE job=?1)",
        "DELETE FROM tracks WHERE process IN (SELECT id FROM processes WHERE "
        "job=?1)",
        "DELETE FROM processes WHERE job=?1",
        "DELETE FROM job_agents WHERE job=?1",
        "DELETE FROM clock_solutions WHERE job=?1",
        "DELETE FROM summary_states WHERE job=?1",
        "DELETE FROM step_summaries WHERE job=?1",
        "DELETE FROM jobs WHERE id=?1"}) {
    auto statement = Prepare(sql);
    if (!statement.ok()) {
      status = statement.status();
      break;
    }
    rc = (*statement)->Bind(1, id).Step();
    (*statement)->Reset();
    if (rc != SQLITE_DONE) {
      status = Fail("deleting a job failed");
      break;
    }
  }
  if (status.ok()) status = Exec("COMMIT;");
  if (!status.ok()) Exec("ROLLBACK;").IgnoreError();
  // Cached ids may name the rows just deleted.
  caches_ = std::make_unique<Caches>(max_cached_ids_);
  if (!status.ok()) return status;
  return spans;
}

absl::StatusOr<std::vector<std::string>> SqliteStore::DeleteJobsEndedBefore(
    int64_t end_before_ns) {
  auto jobs = ListJobs();
  if (!jobs.ok()) return jobs.status();
  std::vector<std::string> deleted;
  for (const JobInfo& job : *jobs) {
    // A job of imported statistics only has no span end: its last write.
    const int64_t last = job.spans > 0 ? job.max_end_ns : job.written_ns;
    if (last >= end_before_ns) continue;
    auto spans = DeleteJob(job.name);
    if (!spans.ok()) return spans.status();
    deleted.push_back(job.name);
  }
  return deleted;
}

size_t SqliteStore::cached_ids() const {
  return caches_->string_ids.size() + caches_->jobs.size() +
         caches_->processes.size() + caches_->tracks.size() +
         caches_->ops.size();
}

absl::StatusOr<std::vector<BatchWriteResult>> SqliteStore::Write(
    absl::Span<const v1::Batch* const> batches,
    absl::Span<std::vector<SpanColumns>* const> decoded) {
  std::vector<BatchWriteResult> results(batches.size());
  absl::Status status = Exec("BEGIN IMMEDIATE;");
  if (!status.ok()) return status;
  for (size_t i = 0; i < batches.size() && status.ok(); ++i) {
    status = WriteOne(*batches[i], decoded.empty() ? nullptr : decoded[i],
                      &results[i]);
  }
  if (status.ok()) status = Exec("COMMIT;");
  if (!status.ok()) {
    // Nothing of this call is stored; interned ids may name rolled-back rows.
    Exec("ROLLBACK;").IgnoreError();
    caches_ = std::make_unique<Caches>(max_cached_ids_);
    return status;
  }
  return results;
}

absl::Status SqliteStore::WriteOne(const v1::Batch& batch,
                                   std::vector<SpanColumns>* decoded,
                                   BatchWriteResult* result) {
  auto recorded = RecordBatch(batch);
  if (!recorded.ok()) return recorded.status();
  if (!*recorded) {
    result->duplicate = true;
    return absl::OkStatus();
  }
  absl::Status clock = StoreClockModel(batch);
  if (!clock.ok()) return clock;
  auto string_id = InternStrings(batch);
  if (!string_id.ok()) return string_id.status();
  auto process = StoreProcesses(batch, *string_id);
  if (!process.ok()) return process.status();
  auto track_id = StoreTracks(batch, *process, *string_id);
  if (!track_id.ok()) return track_id.status();
  if (absl::Status s = RecordJobAgents(batch, *process); !s.ok()) return s;
  if (absl::Status s = StoreTotals(batch, *process, *string_id); !s.ok()) {
    return s;
  }
  auto by_track = SpansByTrack(batch, decoded, *string_id);
  if (!by_track.ok()) return by_track.status();

  int64_t stored = 0;
  for (int t = 0; t < batch.tracks_size(); ++t) {
    SpanColumns& spans = (*by_track)[t];
    stored += static_cast<int64_t>(spans.size());
    if (spans.size() == 0) continue;
    const JobRef& job = (*process)[batch.tracks(t).process()].job;
    absl::Status status =
        WriteTrackSpans(job.id, job.epoch_ns, (*track_id)[t], &spans);
    if (!status.ok()) return status;
  }
  result->spans_stored = stored;
  return absl::OkStatus();
}

absl::StatusOr<bool> SqliteStore::RecordBatch(const v1::Batch& batch) {
  auto mark = Prepare(
      "INSERT OR IGNORE INTO batches(agent, seq, spans, stored_at_ns) "
      "VALUES(?1, ?2, ?3, ?4)");
  if (!mark.ok()) return mark.status();
  const int rc = (*mark)
                     ->Bind(1, batch.agent_id())
                     .Bind(2, static_cast<int64_t>(batch.batch_seq()))
                     .Bind(3, SpanCount(batch))
                     .Bind(4, NowNs())
                     .Step();
  (*mark)->Reset();
  if (rc != SQLITE_DONE) return Fail("recording a batch failed");
  return sqlite3_changes(db_) != 0;
}

// A node sends the same model with every batch until it fits a new one.
absl::Status SqliteStore::StoreClockModel(const v1::Batch& batch) {
  if (!HasClockModel(batch)) return absl::OkStatus();
  const v1::ClockModel& clock = batch.clock();
  auto node = InternString(batch.strings(clock.node()));
  if (!node.ok()) return node.status();
  auto insert = Prepare(
      "INSERT OR IGNORE INTO agent_clock_models VALUES(?1, ?2, ?3, ?4, ?5, "
      "?6)");
  if (!insert.ok()) return insert.status();
  const int rc = (*insert)
                     ->Bind(1, batch.agent_id())
                     .Bind(2, *node)
                     .Bind(3, clock.reference_ns())
                     .Bind(4, clock.offset_ns())
                     .Bind(5, clock.drift_ppb())
                     .Bind(6, clock.uncertainty_ns())
                     .Step();
  (*insert)->Reset();
  if (rc != SQLITE_DONE) return Fail("storing a clock model failed");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> SqliteStore::InternStrings(
    const v1::Batch& batch) {
  std::vector<int64_t> string_id(batch.strings_size());
  for (int i = 0; i < batch.strings_size(); ++i) {
    auto id = InternString(batch.strings(i));
    if (!id.ok()) return id.status();
    string_id[i] = *id;
  }
  return string_id;
}

absl::StatusOr<SqliteStore::JobRef> SqliteStore::StoreJob(
    const std::string& name, int64_t epoch_ns) {
  if (const JobRef* cached = caches_->jobs.Find(name)) return *cached;
  auto insert = Prepare(
      "INSERT INTO jobs(name, epoch_ns, min_start_ns, max_end_ns, "
      "max_dur_ns, max_chunk_ns, spans, chunks) "
      "VALUES(?1, ?2, ?3, ?4, 0, 0, 0, 0) "
      "ON CONFLICT(name) DO UPDATE SET name=name RETURNING id, epoch_ns");
  if (!insert.ok()) return insert.status();
  (*insert)
      ->Bind(1, name)
      .Bind(2, epoch_ns)
      .Bind(3, std::numeric_limits<int64_t>::max())
      .Bind(4, std::numeric_limits<int64_t>::min());
  JobRef job;
  auto id = InsertReturningId(*insert, "creating a job failed", &job.epoch_ns);
  if (!id.ok()) return id.status();
  job.id = *id;
  caches_->jobs.Insert(name, job);
  return job;
}

absl::StatusOr<std::vector<SqliteStore::ProcessRef>>
SqliteStore::StoreProcesses(const v1::Batch& batch,
                            const std::vector<int64_t>& string_id) {
  // A new job's epoch is the earliest start in the batch that creates it.
  const int64_t batch_min_start = MinStart(batch);
  std::vector<ProcessRef> process(batch.processes_size());
  for (int i = 0; i < batch.processes_size(); ++i) {
    const v1::Process& p = batch.processes(i);
    auto job = StoreJob(batch.strings(p.job()), batch_min_start);
    if (!job.ok()) return job.status();
    auto key = std::make_tuple(job->id, string_id[p.node()],
                               static_cast<int64_t>(p.rank()),
                               static_cast<int64_t>(p.local_rank()), p.pid());
    const Caches::StoredProcess* cached = caches_->processes.Find(key);
    int64_t process_id = cached != nullptr ? cached->id : 0;
    // A process learns its world size at MPI_Init, after its first spans;
    // its dropped count grows (both: the validator bounds them).
    const int64_t dropped = static_cast<int64_t>(p.dropped());
    if (cached == nullptr || cached->world_size < p.world_size() ||
        cached->dropped < dropped) {
      auto insert = Prepare(
          "INSERT INTO processes(job, node, rank, local_rank, pid, world_size, "
          "dropped) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO UPDATE "
          "SET world_size=max(world_size, excluded.world_size), "
          "dropped=max(dropped, excluded.dropped) RETURNING id, world_size, "
          "dropped");
      if (!insert.ok()) return insert.status();
      (*insert)
          ->Bind(1, std::get<0>(key))
          .Bind(2, std::get<1>(key))
          .Bind(3, std::get<2>(key))
          .Bind(4, std::get<3>(key))
          .Bind(5, std::get<4>(key))
          .Bind(6, static_cast<int64_t>(p.world_size()))
          .Bind(7, dropped);
      int64_t stored[2] = {0, 0};
      auto id =
          InsertReturningId(*insert, "storing a process failed", stored, 2);
      if (!id.ok()) return id.status();
      caches_->processes.Insert(
          key, {*id, static_cast<int32_t>(stored[0]), stored[1]});
      process_id = *id;
    }
    process[i] = {process_id, *job};
  }
  return process;
}

absl::StatusOr<std::vector<int64_t>> SqliteStore::StoreTracks(
    const v1::Batch& batch, const std::vector<ProcessRef>& process,
    const std::vector<int64_t>& string_id) {
  std::vector<int64_t> track_id(batch.tracks_size());
  for (int i = 0; i < batch.tracks_size(); ++i) {
    const v1::Track& t = batch.tracks(i);
    auto key = std::make_tuple(process[t.process()].id,
                               static_cast<int64_t>(t.kind()), t.id());
    const int64_t* cached = caches_->tracks.Find(key);
    int64_t id_of_track = cached != nullptr ? *cached : 0;
    if (cached == nullptr) {
      // The first name a track is stored with is kept.
      auto insert = Prepare(
          "INSERT INTO tracks(process, kind, ext_id, name) "
          "VALUES(?1, ?2, ?3, ?4) ON CONFLICT DO UPDATE SET kind=kind "
          "RETURNING id");
      if (!insert.ok()) return insert.status();
      (*insert)
          ->Bind(1, std::get<0>(key))
          .Bind(2, std::get<1>(key))
          .Bind(3, std::get<2>(key))
          .Bind(4, string_id[t.name()]);
      auto id = InsertReturningId(*insert, "storing a track failed");
      if (!id.ok()) return id.status();
      caches_->tracks.Insert(key, *id);
      id_of_track = *id;
    }
    track_id[i] = id_of_track;
  }
  return track_id;
}

// The batch's spans per track (track_spans.h), then translated to the
// store's ids.
absl::StatusOr<std::vector<SpanColumns>> SqliteStore::SpansByTrack(
    const v1::Batch& batch, std::vector<SpanColumns>* decoded,
    const std::vector<int64_t>& string_id) {
  auto marks = RingMarks(batch);
  if (!marks.ok()) return marks.status();
  auto by_track = CollectTrackSpans(batch, decoded, *marks, &caches_->wire);
  if (!by_track.ok()) return by_track.status();
  for (SpanColumns& columns : *by_track) {
    absl::Status status = ToStoreIds(string_id, &columns);
    if (!status.ok()) return status;
  }
  return by_track;
}

// For each of the batch's ring ranges, the end of what is already stored
// from that ring (0: nothing); then advances the marks to the ranges' ends.
absl::StatusOr<std::vector<uint64_t>> SqliteStore::RingMarks(
    const v1::Batch& batch) {
  std::vector<uint64_t> marks;
  if (batch.rings_size() == 0) return marks;
  auto select = Prepare(
      "SELECT end_record FROM ring_marks WHERE incarnation=?1 AND ring=?2");
  if (!select.ok()) return select.status();
  auto upsert = Prepare(
      "INSERT INTO ring_marks VALUES(?1, ?2, ?3) ON CONFLICT DO UPDATE SET "
      "end_record=max(end_record, excluded.end_record)");
  if (!upsert.ok()) return upsert.status();
  for (const v1::RingRange& range : batch.rings()) {
    const int64_t incarnation = static_cast<int64_t>(range.incarnation());
    int rc = (*select)->Bind(1, incarnation).Bind(2, range.ring()).Step();
    marks.push_back(rc == SQLITE_ROW ? static_cast<uint64_t>((*select)->Int(0))
                                     : 0);
    (*select)->Reset();
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
      return Fail("reading a ring mark failed");
    }
    rc = (*upsert)
             ->Bind(1, incarnation)
             .Bind(2, range.ring())
             .Bind(3, static_cast<int64_t>(range.end()))
             .Step();
    (*upsert)->Reset();
    if (rc != SQLITE_DONE) return Fail("storing a ring mark failed");
  }
  return marks;
}

absl::StatusOr<int64_t> SqliteStore::OpId(int64_t category, int64_t name_id) {
  auto op_key = std::make_pair(category, name_id);
  if (const int64_t* cached = caches_->ops.Find(op_key)) return *cached;
  auto insert = Prepare(
      "INSERT INTO ops(category, name) VALUES(?1, ?2) "
      "ON CONFLICT DO UPDATE SET name=name RETURNING id");
  if (!insert.ok()) return insert.status();
  (*insert)->Bind(1, op_key.first).Bind(2, op_key.second);
  auto id = InsertReturningId(*insert, "storing an operation failed");
  if (!id.ok()) return id.status();
  caches_->ops.Insert(op_key, *id);
  return *id;
}

absl::Status SqliteStore::ToStoreIds(const std::vector<int64_t>& string_id,
                                     SpanColumns* spans) {
  // Consecutive spans mostly share their operation, so one lookup serves a
  // run of them.
  int64_t last_category = -1, last_name = -1, last_op = 0;
  for (size_t i = 0; i < spans->size(); ++i) {
    if (spans->category[i] != last_category || spans->name[i] != last_name) {
      auto op = OpId(spans->category[i], string_id[spans->name[i]]);
      if (!op.ok()) return op.status();
      last_category = spans->category[i];
      last_name = spans->name[i];
      last_op = *op;
    }
    spans->name[i] = static_cast<uint32_t>(last_op);
    spans->category[i] = 0;
  }
  for (ChunkArg& arg : spans->args) {
    arg.key = static_cast<uint32_t>(string_id[arg.key]);
    if (arg.type == ChunkArg::Type::kString) arg.value = string_id[arg.value];
  }
  return absl::OkStatus();
}

// Stores one track's spans as chunks (ForEachStoreChunk), each a row with
// its time and step bounds.
absl::Status SqliteStore::WriteTrackSpans(int64_t job_id, int64_t epoch_ns,
                                          int64_t track, SpanColumns* spans) {
  auto insert = Prepare(
      "INSERT INTO chunks(job, track, first_start, max_end, count, min_step, "
      "max_step, data) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  if (!insert.ok()) return insert.status();
  Totals totals;
  absl::Status stored = ForEachStoreChunk(
      *spans, &caches_->piece,
      [&](const SpanColumns& piece,
          const StoreChunkBounds& bounds) -> absl::Status {
        auto data = EncodeSpanChunk(piece);
        if (!data.ok()) return data.status();
        (*insert)
            ->Bind(1, job_id)
            .Bind(2, track)
            .Bind(3, bounds.first_start - epoch_ns)
            .Bind(4, bounds.max_end - epoch_ns)
            .Bind(5, bounds.count)
            .BindOptional(6, bounds.has_step, bounds.min_step)
            .BindOptional(7, bounds.has_step, bounds.max_step)
            .BindBlob(8, *data);
        const int rc = (*insert)->Step();
        (*insert)->Reset();
        if (rc != SQLITE_DONE) return Fail("storing a chunk failed");
        totals.min_start = std::min(totals.min_start, bounds.first_start);
        totals.max_end = std::max(totals.max_end, bounds.max_end);
        totals.max_dur = std::max(totals.max_dur, bounds.max_dur);
        totals.max_chunk =
            std::max(totals.max_chunk, bounds.max_end - bounds.first_start);
        totals.spans += bounds.count;
        ++totals.chunks;
        totals.bytes += static_cast<int64_t>(data->size());
        return absl::OkStatus();
      });
  if (!stored.ok()) return stored;

  auto update = Prepare(
      "UPDATE jobs SET min_start_ns=min(min_start_ns, ?2), "
      "max_end_ns=max(max_end_ns, ?3), max_dur_ns=max(max_dur_ns, ?4), "
      "max_chunk_ns=max(max_chunk_ns, ?5), spans=spans+?6, "
      "chunks=chunks+?7, bytes=bytes+?8 WHERE id=?1");
  if (!update.ok()) return update.status();
  const int rc = (*update)
                     ->Bind(1, job_id)
                     .Bind(2, totals.min_start)
                     .Bind(3, totals.max_end)
                     .Bind(4, totals.max_dur)
                     .Bind(5, totals.max_chunk)
                     .Bind(6, totals.spans)
                     .Bind(7, totals.chunks)
                     .Bind(8, totals.bytes)
                     .Step();
  (*update)->Reset();
  if (rc != SQLITE_DONE) return Fail("updating job totals failed");
  return absl::OkStatus();
}

absl::Status SqliteStore::BeginSnapshot() {
  // A deferred transaction takes its snapshot at its first read.
  return Exec("BEGIN; SELECT count(*) FROM meta;");
}

absl::StatusOr<std::vector<JobInfo>> SqliteStore::ListJobs() {
  auto select = Prepare(
      "SELECT j.id, j.name, j.epoch_ns, j.min_start_ns, j.max_end_ns, "
      "j.max_dur_ns, j.spans, "
      "(SELECT count(DISTINCT rank) FROM processes p WHERE p.job=j.id "
      "AND rank >= 0), "
      "(SELECT count(DISTINCT node) FROM processes p WHERE p.job=j.id), "
      "j.max_chunk_ns, j.chunks, "
      "(SELECT ifnull(max(world_size), 0) FROM processes p WHERE p.job=j.id), "
      "j.bytes, j.written_ns, "
      "(SELECT ifnull(sum(dropped), 0) FROM processes p WHERE p.job=j.id) "
      "FROM jobs j ORDER BY j.name");
  if (!select.ok()) return select.status();
  std::vector<JobInfo> jobs;
  int rc;
  while ((rc = (*select)->Step()) == SQLITE_ROW) {
    JobInfo job;
    job.id = (*select)->Int(0);
    job.name = (*select)->Text(1);
    job.epoch_ns = (*select)->Int(2);
    job.min_start_ns = (*select)->Int(3);
    job.max_end_ns = (*select)->Int(4);
    job.max_dur_ns = (*select)->Int(5);
    job.spans = (*select)->Int(6);
    job.ranks = static_cast<int32_t>((*select)->Int(7));
    job.nodes = static_cast<int32_t>((*select)->Int(8));
    job.max_chunk_ns = (*select)->Int(9);
    job.chunks = (*select)->Int(10);
    job.world_size = static_cast<int32_t>((*select)->Int(11));
    job.bytes = (*select)->Int(12);
    job.written_ns = (*select)->Int(13);
    job.spans_dropped = (*select)->Int(14);
    jobs.push_back(std::move(job));
  }
  (*select)->Reset();
  if (rc != SQLITE_DONE) return Fail("listing jobs failed");
  return jobs;
}

absl::StatusOr<JobCatalog> SqliteStore::LoadCatalog(
    const std::string& job_name) {
  auto jobs = ListJobs();
  if (!jobs.ok()) return jobs.status();
  JobCatalog catalog;
  bool found = false;
  for (JobInfo& job : *jobs) {
    if (job.name == job_name) {
      catalog.job = std::move(job);
      found = true;
    }
  }
  // The message names no other job: the asker may not be allowed to know
  // of them (docs/security.md).
  if (!found) {
    return absl::NotFoundError(
        absl::StrCat("no job \"", job_name, "\" in ", named_,
                     " (`meridian jobs` lists the stored jobs)"));
  }

  auto processes = Prepare(
      "SELECT p.id, s.s, p.rank, p.local_rank, p.pid, p.dropped FROM "
      "processes p "
      "JOIN strings s ON s.id=p.node WHERE p.job=?1 ORDER BY p.rank, p.id");
  if (!processes.ok()) return processes.status();
  (*processes)->Bind(1, catalog.job.id);
  int rc;
  while ((rc = (*processes)->Step()) == SQLITE_ROW) {
    catalog.processes.push_back({(*processes)->Int(0), (*processes)->Text(1),
                                 static_cast<int32_t>((*processes)->Int(2)),
                                 static_cast<int32_t>((*processes)->Int(3)),
                                 (*processes)->Int(4), (*processes)->Int(5)});
  }
  (*processes)->Reset();
  if (rc != SQLITE_DONE) return Fail("reading processes failed");

  auto tracks = Prepare(
      "SELECT t.id, t.process, t.kind, t.ext_id, s.s FROM tracks t "
      "JOIN processes p ON p.id=t.process JOIN strings s ON s.id=t.name "
      "WHERE p.job=?1 ORDER BY t.process, t.kind, t.ext_id");
  if (!tracks.ok()) return tracks.status();
  (*tracks)->Bind(1, catalog.job.id);
  while ((rc = (*tracks)->Step()) == SQLITE_ROW) {
    catalog.tracks.push_back({(*tracks)->Int(0), (*tracks)->Int(1),
                              static_cast<v1::TrackKind>((*tracks)->Int(2)),
                              (*tracks)->Int(3), (*tracks)->Text(4)});
  }
  (*tracks)->Reset();
  if (rc != SQLITE_DONE) return Fail("reading tracks failed");

  // All operations: a few hundred at most, shared by all jobs.
  auto ops = Prepare(
      "SELECT o.id, o.category, s.s FROM ops o JOIN strings s ON s.id=o.name "
      "ORDER BY o.id");
  if (!ops.ok()) return ops.status();
  while ((rc = (*ops)->Step()) == SQLITE_ROW) {
    catalog.ops.push_back({(*ops)->Int(0),
                           static_cast<v1::Category>((*ops)->Int(1)),
                           (*ops)->Text(2)});
  }
  (*ops)->Reset();
  if (rc != SQLITE_DONE) return Fail("reading operations failed");
  return catalog;
}

// The chunks of a scan, from one statement of its own (it may run while
// the caller uses the store's others).
class SqliteStore::ScanSource final : public ChunkSource {
 public:
  ScanSource(SqliteStore* store, Statement* stmt, const ScanRange* range,
             int64_t epoch_ns)
      : store_(store), stmt_(stmt), range_(range), epoch_ns_(epoch_ns) {
    rc_ = stmt_->Step();
  }
  absl::StatusOr<std::optional<int64_t>> PeekFirstStart() override {
    if (rc_ == SQLITE_ROW) return stmt_->Int(2) + epoch_ns_;
    if (rc_ != SQLITE_DONE) return store_->Fail("scanning chunks failed");
    return std::nullopt;
  }
  absl::StatusOr<bool> Take(MergeChunk* out) override {
    const int64_t track = stmt_->Int(1);
    bool wanted = !range_->tracks || range_->tracks->contains(track);
    if (wanted) {
      out->op_ids.clear();  // spans name store ids (MergeChunk)
      out->strings.clear();
      absl::Status status = DecodeSpanChunk(stmt_->Blob(3), &out->spans);
      if (!status.ok()) {
        return absl::DataLossError(absl::StrCat(
            store_->named_, ": chunk ", stmt_->Int(0), ": ", status.message()));
      }
      out->id = stmt_->Int(0);
      out->track = track;
    }
    rc_ = stmt_->Step();
    return wanted;
  }
  absl::StatusOr<std::string> LookupString(int64_t id) override {
    return store_->LookupString(id);
  }

 private:
  SqliteStore* store_;
  Statement* stmt_;
  const ScanRange* range_;
  int64_t epoch_ns_;
  int rc_;
};

absl::Status SqliteStore::Scan(
    const JobInfo& job, const ScanRange& range,
    const std::function<bool(const StoredSpan&)>& visit, ScanStats* stats) {
  // Stored times are relative to the job's epoch; the range is relative to
  // the job's first span. A span ending at or after `from` is in a chunk
  // starting no earlier than from - max_chunk, which bounds the index scan.
  const int64_t base = job.min_start_ns - job.epoch_ns;
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
  int64_t end_lo = std::numeric_limits<int64_t>::min();
  if (range.from_ns) {
    end_lo = base + *range.from_ns;
    lo = end_lo - job.max_chunk_ns;
  }
  if (range.to_ns) hi = base + *range.to_ns;
  const bool by_step = range.first_step || range.last_step;

  // A scan gets its own statement: it may run while the caller uses others.
  sqlite3_stmt* raw = nullptr;
  const char* sql =
      "SELECT id, track, first_start, data FROM chunks "
      "WHERE job=?1 AND first_start>=?2 AND first_start<?3 AND max_end>=?4 "
      "AND (?5=0 OR (max_step>=?6 AND min_step<=?7)) AND id>?8 "
      "ORDER BY first_start, id";
  if (sqlite3_prepare_v2(db_, sql, -1, &raw, nullptr) != SQLITE_OK) {
    return Fail("preparing a scan failed");
  }
  Statement stmt(raw);
  stmt.Bind(1, job.id).Bind(2, lo).Bind(3, hi).Bind(4, end_lo);
  stmt.Bind(5, by_step ? 1 : 0)
      .Bind(6, range.first_step.value_or(std::numeric_limits<int64_t>::min()))
      .Bind(7, range.last_step.value_or(std::numeric_limits<int64_t>::max()))
      .Bind(8, range.written_after.value_or(0));
  ScanSource source(this, &stmt, &range, job.epoch_ns);
  const int64_t abs_hi =
      hi == std::numeric_limits<int64_t>::max() ? hi : hi + job.epoch_ns;
  const int64_t abs_end_lo = end_lo == std::numeric_limits<int64_t>::min()
                                 ? end_lo
                                 : end_lo + job.epoch_ns;
  return MergeChunks(&source, range, abs_end_lo, abs_hi, visit, stats);
}

absl::StatusOr<int64_t> SqliteStore::FileBytes() {
  int64_t total = 0;
  for (const std::string& file : {path_, path_ + "-wal"}) {
    struct stat st;
    if (stat(file.c_str(), &st) == 0) total += st.st_size;
  }
  return total;
}

absl::Status SqliteStore::RecordJobAgents(
    const v1::Batch& batch, const std::vector<ProcessRef>& processes) {
  auto insert = Prepare("INSERT OR IGNORE INTO job_agents VALUES(?1, ?2)");
  if (!insert.ok()) return insert.status();
  auto written = Prepare("UPDATE jobs SET written_ns=?2 WHERE id=?1");
  if (!written.ok()) return written.status();
  const int64_t now = NowNs();
  int64_t last_job = -1;
  for (const ProcessRef& process : processes) {
    if (process.job.id == last_job) continue;
    last_job = process.job.id;
    int rc =
        (*insert)->Bind(1, process.job.id).Bind(2, batch.agent_id()).Step();
    (*insert)->Reset();
    if (rc != SQLITE_DONE) return Fail("recording a job's agent failed");
    rc = (*written)->Bind(1, process.job.id).Bind(2, now).Step();
    (*written)->Reset();
    if (rc != SQLITE_DONE) return Fail("recording a job's write time failed");
  }
  return absl::OkStatus();
}

// Only the models of agents that delivered spans of the job: another job's
// agent cannot move this job's timeline (docs/security.md). A job stored
// before version 4 has no such record and uses every model of the node.
absl::StatusOr<std::vector<NodeClockModel>> SqliteStore::LoadClockModels(
    const std::string& node, int64_t job_id) {
  auto select = Prepare(
      "SELECT c.reference_ns, c.offset_ns, c.drift_ppb, c.uncertainty_ns "
      "FROM agent_clock_models c JOIN strings s ON s.id=c.node WHERE s.s=?1 "
      "AND (c.agent IN (SELECT agent FROM job_agents WHERE job=?2) OR NOT "
      "EXISTS (SELECT 1 FROM job_agents WHERE job=?2)) "
      "ORDER BY c.reference_ns");
  if (!select.ok()) return select.status();
  (*select)->Bind(1, node).Bind(2, job_id);
  std::vector<NodeClockModel> models;
  int rc;
  while ((rc = (*select)->Step()) == SQLITE_ROW) {
    models.push_back({(*select)->Int(0), (*select)->Int(1), (*select)->Int(2),
                      (*select)->Int(3)});
  }
  (*select)->Reset();
  if (rc != SQLITE_DONE) return Fail("reading clock models failed");
  return models;
}

// Totals replace what was stored for the same process (and operation):
// they are one tool's measurement of it, not increments.
absl::Status SqliteStore::StoreTotals(const v1::Batch& batch,
                                      const std::vector<ProcessRef>& process,
                                      const std::vector<int64_t>& string_id) {
  if (batch.op_totals_size() == 0 && batch.process_totals_size() == 0) {
    return absl::OkStatus();
  }
  auto op_row = Prepare(
      "INSERT OR REPLACE INTO op_totals(process, op, calls, bytes, dur_ns) "
      "VALUES(?1, ?2, ?3, ?4, ?5)");
  auto clear_sizes =
      Prepare("DELETE FROM op_size_totals WHERE process=?1 AND op=?2");
  auto size_row = Prepare(
      "INSERT INTO op_size_totals(process, op, log2, calls, bytes, dur_ns) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
  auto process_row = Prepare(
      "INSERT OR REPLACE INTO process_totals(process, comm_ns, elapsed_ns, "
      "source, user_ns, system_ns, max_rss_bytes, context_switches) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  for (const auto* s : {&op_row, &clear_sizes, &size_row, &process_row}) {
    if (!s->ok()) return s->status();
  }
  const auto step = [&](Statement* statement) {
    const int rc = statement->Step();
    statement->Reset();
    return rc == SQLITE_DONE ? absl::OkStatus()
                             : Fail("storing imported totals failed");
  };
  for (const v1::ImportedOpTotals& op : batch.op_totals()) {
    const int64_t process_id = process[op.process()].id;
    auto op_id = OpId(op.category(), string_id[op.name()]);
    if (!op_id.ok()) return op_id.status();
    (*op_row)
        ->Bind(1, process_id)
        .Bind(2, *op_id)
        .Bind(3, op.calls())
        .Bind(4, op.bytes())
        .Bind(5, op.dur_ns());
    if (absl::Status s = step(*op_row); !s.ok()) return s;
    (*clear_sizes)->Bind(1, process_id).Bind(2, *op_id);
    if (absl::Status s = step(*clear_sizes); !s.ok()) return s;
    for (const v1::ImportedSizeTotals& size : op.sizes()) {
      (*size_row)
          ->Bind(1, process_id)
          .Bind(2, *op_id)
          .Bind(3, static_cast<int64_t>(size.log2()))
          .Bind(4, size.calls())
          .Bind(5, size.bytes())
          .Bind(6, size.dur_ns());
      if (absl::Status s = step(*size_row); !s.ok()) return s;
    }
  }
  for (const v1::ImportedProcessTotals& p : batch.process_totals()) {
    (*process_row)
        ->Bind(1, process[p.process()].id)
        .Bind(2, p.comm_ns())
        .Bind(3, p.elapsed_ns())
        .Bind(4, string_id[p.source()])
        .BindOptional(5, p.has_user_ns(), p.user_ns())
        .BindOptional(6, p.has_system_ns(), p.system_ns())
        .BindOptional(7, p.has_max_rss_bytes(), p.max_rss_bytes())
        .BindOptional(8, p.has_context_switches(), p.context_switches());
    if (absl::Status s = step(*process_row); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// A store opened read-only that an older Meridian created has no totals
// tables (they are created when a writer opens it): it has no totals.
absl::StatusOr<JobTotals> SqliteStore::LoadTotals(int64_t job_id) {
  JobTotals totals;
  auto tables = CountTables(
      "SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN "
      "('op_totals', 'op_size_totals', 'process_totals')");
  if (!tables.ok()) return tables.status();
  if (*tables != 3) return totals;
  int rc;
  auto ops = Prepare(
      "SELECT t.process, t.op, t.calls, t.bytes, t.dur_ns FROM op_totals t "
      "JOIN processes p ON p.id=t.process WHERE p.job=?1 "
      "ORDER BY t.process, t.op");
  if (!ops.ok()) return ops.status();
  (*ops)->Bind(1, job_id);
  while ((rc = (*ops)->Step()) == SQLITE_ROW) {
    StoredOpTotals op;
    op.process_id = (*ops)->Int(0);
    op.op_id = (*ops)->Int(1);
    op.calls = (*ops)->Int(2);
    op.bytes = (*ops)->Int(3);
    op.dur_ns = (*ops)->Int(4);
    totals.ops.push_back(std::move(op));
  }
  (*ops)->Reset();
  if (rc != SQLITE_DONE) return Fail("reading op totals failed");

  auto sizes = Prepare(
      "SELECT t.process, t.op, t.log2, t.calls, t.bytes, t.dur_ns FROM "
      "op_size_totals t JOIN processes p ON p.id=t.process WHERE p.job=?1 "
      "ORDER BY t.process, t.op, t.log2");
  if (!sizes.ok()) return sizes.status();
  (*sizes)->Bind(1, job_id);
  size_t at = 0;  // both are in (process, op) order
  while ((rc = (*sizes)->Step()) == SQLITE_ROW) {
    const int64_t process_id = (*sizes)->Int(0), op_id = (*sizes)->Int(1);
    while (at < totals.ops.size() &&
           std::make_pair(totals.ops[at].process_id, totals.ops[at].op_id) <
               std::make_pair(process_id, op_id)) {
      ++at;
    }
    if (at == totals.ops.size() || totals.ops[at].process_id != process_id ||
        totals.ops[at].op_id != op_id) {
      continue;  // a size without its op: not written by this store
    }
    totals.ops[at].sizes.push_back({static_cast<int32_t>((*sizes)->Int(2)),
                                    (*sizes)->Int(3), (*sizes)->Int(4),
                                    (*sizes)->Int(5)});
  }
  (*sizes)->Reset();
  if (rc != SQLITE_DONE) return Fail("reading size totals failed");

  auto processes = Prepare(
      "SELECT t.process, t.comm_ns, t.elapsed_ns, s.s, t.user_ns, t.system_ns, "
      "t.max_rss_bytes, t.context_switches FROM process_totals t "
      "JOIN processes p ON p.id=t.process JOIN strings s ON s.id=t.source "
      "WHERE p.job=?1 ORDER BY t.process");
  if (!processes.ok()) return processes.status();
  (*processes)->Bind(1, job_id);
  while ((rc = (*processes)->Step()) == SQLITE_ROW) {
    StoredProcessTotals p{(*processes)->Int(0), (*processes)->Int(1),
                          (*processes)->Int(2), (*processes)->Text(3)};
    for (auto [column, out] : {std::pair{4, &p.user_ns},
                               {5, &p.system_ns},
                               {6, &p.max_rss_bytes},
                               {7, &p.context_switches}}) {
      if (!(*processes)->IsNull(column)) *out = (*processes)->Int(column);
    }
    totals.processes.push_back(std::move(p));
  }
  (*processes)->Reset();
  if (rc != SQLITE_DONE) return Fail("reading process totals failed");
  return totals;
}

absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>>
SqliteStore::StepRange(int64_t job_id) {
  auto select = Prepare(
      "SELECT min(min_step), max(max_step) FROM chunks WHERE job=?1 AND "
      "min_step IS NOT NULL");
  if (!select.ok()) return select.status();
  const int rc = (*select)->Bind(1, job_id).Step();
  std::optional<std::pair<int64_t, int64_t>> range;
  if (rc == SQLITE_ROW && !(*select)->IsNull(0)) {
    range = std::make_pair((*select)->Int(0), (*select)->Int(1));
  }
  (*select)->Reset();
  if (rc != SQLITE_ROW) return Fail("reading a job's steps failed");
  return range;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>>
SqliteStore::TrackLastSteps(int64_t job_id) {
  auto select = Prepare(
      "SELECT track, max(max_step) FROM chunks WHERE job=?1 AND min_step IS "
      "NOT NULL GROUP BY track ORDER BY track");
  if (!select.ok()) return select.status();
  (*select)->Bind(1, job_id);
  std::vector<std::pair<int64_t, int64_t>> tracks;
  int rc;
  while ((rc = (*select)->Step()) == SQLITE_ROW) {
    tracks.emplace_back((*select)->Int(0), (*select)->Int(1));
  }
  (*select)->Reset();
  if (rc != SQLITE_DONE) return Fail("reading a job's steps failed");
  return tracks;
}

absl::StatusOr<int64_t> SqliteStore::WriteMark(int64_t job_id) {
  // Chunk ids only grow while the job has chunks: a new one is above the
  // table's highest, which is at least this job's.
  auto select = Prepare("SELECT coalesce(max(id), 0) FROM chunks WHERE job=?1");
  if (!select.ok()) return select.status();
  const int rc = (*select)->Bind(1, job_id).Step();
  const int64_t mark = rc == SQLITE_ROW ? (*select)->Int(0) : 0;
  (*select)->Reset();
  if (rc != SQLITE_ROW) return Fail("reading a job's chunks failed");
  return mark;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>>
SqliteStore::StepsWrittenAfter(int64_t job_id, int64_t mark, int64_t up_to) {
  auto select = Prepare(
      "SELECT DISTINCT min_step, max_step FROM chunks WHERE job=?1 AND id>?2 "
      "AND min_step IS NOT NULL AND min_step<=?3 ORDER BY min_step, max_step");
  if (!select.ok()) return select.status();
  (*select)->Bind(1, job_id).Bind(2, mark).Bind(3, up_to);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  int rc;
  while ((rc = (*select)->Step()) == SQLITE_ROW) {
    ranges.emplace_back((*select)->Int(0), (*select)->Int(1));
  }
  (*select)->Reset();
  if (rc != SQLITE_DONE) return Fail("reading a job's chunks failed");
  return ranges;
}

absl::StatusOr<int64_t> SqliteStore::CountTables(const char* count_sql) {
  auto count = Prepare(count_sql);
  if (!count.ok()) return count.status();
  const int rc = (*count)->Step();
  const int64_t tables = rc == SQLITE_ROW ? (*count)->Int(0) : 0;
  (*count)->Reset();
  if (rc != SQLITE_ROW) return Fail("reading the schema failed");
  return tables;
}

// Prepare keeps statements by address: these are literals.
struct SqliteResultTable {
  const char* has_table;
  const char* select;
  const char* insert;
};
namespace {
constexpr SqliteResultTable kClockSolutions = {
    "SELECT count(*) FROM sqlite_master WHERE type='table' AND "
    "name='clock_solutions'",
    "SELECT spans, written_ns, models, solved_ns, data FROM clock_solutions "
    "WHERE job=?1",
    "INSERT OR REPLACE INTO clock_solutions VALUES(?1, ?2, ?3, ?4, ?5, ?6)"};
constexpr SqliteResultTable kSummaryStates = {
    "SELECT count(*) FROM sqlite_master WHERE type='table' AND "
    "name='summary_states'",
    "SELECT spans, written_ns, models, computed_ns, data FROM "
    "summary_states WHERE job=?1",
    "INSERT OR REPLACE INTO summary_states VALUES(?1, ?2, ?3, ?4, ?5, ?6)"};
}  // namespace

// A store without the table has no result.
absl::StatusOr<std::optional<StoredJobResult>> SqliteStore::LoadResult(
    const SqliteResultTable& table, int64_t job_id) {
  auto tables = CountTables(table.has_table);
  if (!tables.ok()) return tables.status();
  std::optional<StoredJobResult> result;
  if (*tables == 0) return result;
  auto select = Prepare(table.select);
  if (!select.ok()) return select.status();
  const int rc = (*select)->Bind(1, job_id).Step();
  if (rc == SQLITE_ROW) {
    result =
        StoredJobResult{(*select)->Int(0), (*select)->Int(1), (*select)->Int(2),
                        (*select)->Int(3), std::string((*select)->Blob(4))};
  }
  (*select)->Reset();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    return Fail("reading a job's stored result failed");
  }
  return result;
}

absl::Status SqliteStore::SaveResult(const SqliteResultTable& table,
                                     int64_t job_id,
                                     const StoredJobResult& result) {
  auto insert = Prepare(table.insert);
  if (!insert.ok()) return insert.status();
  const int rc = (*insert)
                     ->Bind(1, job_id)
                     .Bind(2, result.spans)
                     .Bind(3, result.written_ns)
                     .Bind(4, result.models)
                     .Bind(5, result.computed_ns)
                     .BindBlob(6, result.data)
                     .Step();
  (*insert)->Reset();
  if (rc != SQLITE_DONE) return Fail("storing a job's result failed");
  return absl::OkStatus();
}

absl::StatusOr<std::optional<StoredJobResult>> SqliteStore::LoadClockSolution(
    int64_t job_id) {
  return LoadResult(kClockSolutions, job_id);
}

absl::Status SqliteStore::SaveClockSolution(int64_t job_id,
                                            const StoredJobResult& solution) {
  return SaveResult(kClockSolutions, job_id, solution);
}

absl::StatusOr<std::optional<StoredJobResult>> SqliteStore::LoadSummaryState(
    int64_t job_id) {
  return LoadResult(kSummaryStates, job_id);
}

// One transaction: the state is never stored without its summaries.
absl::Status SqliteStore::SaveStepSummaries(
    int64_t job_id, const std::vector<StoredStepSummary>& steps,
    const StoredJobResult& state) {
  absl::Status status = Exec("BEGIN IMMEDIATE;");
  if (!status.ok()) return status;
  auto insert =
      Prepare("INSERT OR REPLACE INTO step_summaries VALUES(?1, ?2, ?3)");
  if (!insert.ok()) status = insert.status();
  for (size_t i = 0; status.ok() && i < steps.size(); ++i) {
    const int rc = (*insert)
                       ->Bind(1, job_id)
                       .Bind(2, steps[i].step)
                       .BindBlob(3, steps[i].data)
                       .Step();
    (*insert)->Reset();
    if (rc != SQLITE_DONE) status = Fail("storing step summaries failed");
  }
  if (status.ok()) status = SaveResult(kSummaryStates, job_id, state);
  if (status.ok()) status = Exec("COMMIT;");
  if (!status.ok()) Exec("ROLLBACK;").IgnoreError();
  return status;
}

absl::Status SqliteStore::ScanStepSummaries(
    int64_t job_id, int64_t first_step,
    const std::function<bool(const StoredStepSummary&)>& visit) {
  auto tables = CountTables(
      "SELECT count(*) FROM sqlite_master WHERE type='table' AND "
      "name='step_summaries'");
  if (!tables.ok()) return tables.status();
  if (*tables == 0) return absl::OkStatus();
  auto select = Prepare(
      "SELECT step, data FROM step_summaries WHERE job=?1 AND step>=?2 "
      "ORDER BY step");
  if (!select.ok()) return select.status();
  (*select)->Bind(1, job_id).Bind(2, first_step);
  int rc;
  StoredStepSummary row;
  while ((rc = (*select)->Step()) == SQLITE_ROW) {
    row.step = (*select)->Int(0);
    const absl::string_view data = (*select)->Blob(1);
    row.data.assign(data.data(), data.size());
    if (!visit(row)) break;
  }
  (*select)->Reset();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    return Fail("reading step summaries failed");
  }
  return absl::OkStatus();
}

}  // namespace meridian
