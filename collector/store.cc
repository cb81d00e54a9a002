#include "collector/store.h"

#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collector/args_blob.h"
#include "collector/batch_validator.h"

namespace meridian {
namespace {

// Version 2: clock models are kept per node, by (node, reference_ns).
constexpr int kSchemaVersion = 2;

// Everything is created in one transaction, so a store is either complete or
// absent. Comments on every column: docs/wire-and-store.md.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS strings(id INTEGER PRIMARY KEY, s TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS jobs(
  id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, epoch_ns INTEGER NOT NULL,
  min_start_ns INTEGER NOT NULL, max_end_ns INTEGER NOT NULL,
  max_dur_ns INTEGER NOT NULL, spans INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS processes(
  id INTEGER PRIMARY KEY, job INTEGER NOT NULL, node INTEGER NOT NULL,
  rank INTEGER NOT NULL, local_rank INTEGER NOT NULL, pid INTEGER NOT NULL,
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
CREATE TABLE IF NOT EXISTS clock_models(
  node INTEGER NOT NULL, reference_ns INTEGER NOT NULL,
  offset_ns INTEGER NOT NULL, drift_ppb INTEGER NOT NULL,
  uncertainty_ns INTEGER NOT NULL, agent TEXT NOT NULL,
  PRIMARY KEY(node, reference_ns)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS spans(
  job INTEGER NOT NULL, start INTEGER NOT NULL, track INTEGER NOT NULL,
  k INTEGER NOT NULL, op INTEGER NOT NULL, dur INTEGER NOT NULL,
  bytes INTEGER NOT NULL, peer INTEGER, tag INTEGER, comm INTEGER NOT NULL,
  comm_size INTEGER NOT NULL, seq INTEGER, step INTEGER, partition INTEGER,
  corr INTEGER NOT NULL, kind INTEGER NOT NULL, value REAL, args BLOB,
  PRIMARY KEY(job, start, track, k)) WITHOUT ROWID;
)sql";

int64_t NowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

}  // namespace

// A prepared statement, reset after every use.
class Store::Statement {
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
struct Store::Caches {
  struct JobState {
    int64_t id;
    int64_t epoch_ns;
  };
  absl::flat_hash_map<std::string, int64_t> string_ids;
  absl::flat_hash_map<std::string, JobState> jobs;
  absl::flat_hash_map<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>,
                      int64_t>
      processes;
  absl::flat_hash_map<std::tuple<int64_t, int64_t, int64_t>, int64_t> tracks;
  absl::flat_hash_map<std::pair<int64_t, int64_t>, int64_t> ops;
};

Store::Store(sqlite3* db, std::string path)
    : db_(db), path_(std::move(path)), caches_(std::make_unique<Caches>()) {}

Store::~Store() {
  statements_.clear();  // finalize before close
  sqlite3_close(db_);
}

absl::Status Store::Fail(const char* what) const {
  return absl::InternalError(
      absl::StrCat(what, " in store ", path_, ": ", sqlite3_errmsg(db_)));
}

absl::Status Store::Exec(const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    absl::Status status = absl::InternalError(
        absl::StrCat("store ", path_, ": ", error ? error : "unknown error"));
    sqlite3_free(error);
    return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<Store::Statement*> Store::Prepare(const char* sql) {
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

absl::StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path,
                                                   StoreOptions options) {
  sqlite3* db = nullptr;
  int flags = options.read_only ? SQLITE_OPEN_READONLY
                                : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  flags |= SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return absl::UnavailableError(
        absl::StrCat("cannot open store ", path, ": ", message));
  }
  std::unique_ptr<Store> store(new Store(db, path));
  // Waits rather than fails while another connection holds a lock briefly.
  sqlite3_busy_timeout(db, 10000);
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
    status = store->MigrateFromVersion1();
    if (!status.ok()) return status;
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

// Version 1 kept clock models per batch, without their node, so they
// cannot be applied: the table is replaced; nothing else changed.
absl::Status Store::MigrateFromVersion1() {
  sqlite3_stmt* stmt = nullptr;
  int64_t version = 0;
  if (sqlite3_prepare_v2(db_,
                         "SELECT value FROM meta WHERE key='schema_version'",
                         -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    version = sqlite3_column_int64(stmt, 0);
  }
  sqlite3_finalize(stmt);  // no meta table yet: a new store
  if (version != 1) return absl::OkStatus();
  absl::Status status = Exec(
      "BEGIN IMMEDIATE;DROP TABLE IF EXISTS clock_models;"
      "UPDATE meta SET value=2 WHERE key='schema_version';COMMIT;");
  if (!status.ok()) Exec("ROLLBACK;").IgnoreError();
  return status;
}

absl::StatusOr<int64_t> Store::InternString(const std::string& s) {
  auto it = caches_->string_ids.find(s);
  if (it != caches_->string_ids.end()) return it->second;
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
  caches_->string_ids.emplace(s, id);
  return id;
}

absl::StatusOr<std::string> Store::LookupString(int64_t id) {
  auto it = string_by_id_.find(id);
  if (it != string_by_id_.end()) return it->second;
  auto select = Prepare("SELECT s FROM strings WHERE id=?1");
  if (!select.ok()) return select.status();
  if ((*select)->Bind(1, id).Step() != SQLITE_ROW) {
    (*select)->Reset();
    return absl::DataLossError(
        absl::StrCat("store ", path_, " has no string ", id));
  }
  std::string s = (*select)->Text(0);
  (*select)->Reset();
  string_by_id_.emplace(id, s);
  return s;
}

absl::StatusOr<int64_t> Store::InsertReturningId(Statement* insert,
                                                 const char* what,
                                                 int64_t* second_column) {
  if (insert->Step() != SQLITE_ROW) {
    insert->Reset();
    return Fail(what);
  }
  int64_t id = insert->Int(0);
  if (second_column != nullptr) *second_column = insert->Int(1);
  insert->Step();  // SQLITE_DONE: the statement has finished
  insert->Reset();
  return id;
}

absl::StatusOr<std::vector<BatchWriteResult>> Store::Write(
    absl::Span<const v1::Batch* const> batches) {
  std::vector<BatchWriteResult> results(batches.size());
  absl::Status status = Exec("BEGIN IMMEDIATE;");
  if (!status.ok()) return status;
  for (size_t i = 0; i < batches.size() && status.ok(); ++i) {
    status = WriteOne(*batches[i], &results[i]);
  }
  if (status.ok()) status = Exec("COMMIT;");
  if (!status.ok()) {
    // Nothing of this call is stored; interned ids may name rolled-back rows.
    Exec("ROLLBACK;").IgnoreError();
    caches_ = std::make_unique<Caches>();
    return status;
  }
  return results;
}

absl::Status Store::WriteOne(const v1::Batch& batch, BatchWriteResult* result) {
  auto mark = Prepare(
      "INSERT OR IGNORE INTO batches(agent, seq, spans, stored_at_ns) "
      "VALUES(?1, ?2, ?3, ?4)");
  if (!mark.ok()) return mark.status();
  int rc = (*mark)
               ->Bind(1, batch.agent_id())
               .Bind(2, static_cast<int64_t>(batch.batch_seq()))
               .Bind(3, batch.spans_size())
               .Bind(4, NowNs())
               .Step();
  (*mark)->Reset();
  if (rc != SQLITE_DONE) return Fail("recording a batch failed");
  if (sqlite3_changes(db_) == 0) {
    result->duplicate = true;
    return absl::OkStatus();
  }

  // A node sends the same model with every batch until it fits a new one:
  // stored once per (node, reference_ns).
  const v1::ClockModel& clock = batch.clock();
  if (HasClockModel(batch)) {
    auto node = InternString(batch.strings(clock.node()));
    if (!node.ok()) return node.status();
    auto insert = Prepare(
        "INSERT OR IGNORE INTO clock_models VALUES(?1, ?2, ?3, ?4, ?5, ?6)");
    if (!insert.ok()) return insert.status();
    rc = (*insert)
             ->Bind(1, *node)
             .Bind(2, clock.reference_ns())
             .Bind(3, clock.offset_ns())
             .Bind(4, clock.drift_ppb())
             .Bind(5, clock.uncertainty_ns())
             .Bind(6, batch.agent_id())
             .Step();
    (*insert)->Reset();
    if (rc != SQLITE_DONE) return Fail("storing a clock model failed");
  }

  // Batch-local string indexes to store ids.
  std::vector<int64_t> string_id(batch.strings_size());
  for (int i = 0; i < batch.strings_size(); ++i) {
    auto id = InternString(batch.strings(i));
    if (!id.ok()) return id.status();
    string_id[i] = *id;
  }

  // A new job's epoch is the earliest start in the batch that creates it.
  int64_t batch_min_start = std::numeric_limits<int64_t>::max();
  for (const v1::Span& span : batch.spans()) {
    batch_min_start = std::min(batch_min_start, span.start_ns());
  }
  if (batch.spans_size() == 0) batch_min_start = 0;

  struct ProcessRef {
    int64_t id;
    Caches::JobState job;
  };
  std::vector<ProcessRef> process_ref(batch.processes_size());
  for (int i = 0; i < batch.processes_size(); ++i) {
    const v1::Process& p = batch.processes(i);
    const std::string& job_name = batch.strings(p.job());
    auto job_it = caches_->jobs.find(job_name);
    if (job_it == caches_->jobs.end()) {
      auto insert = Prepare(
          "INSERT INTO jobs(name, epoch_ns, min_start_ns, max_end_ns, "
          "max_dur_ns, spans) VALUES(?1, ?2, ?3, ?4, 0, 0) "
          "ON CONFLICT(name) DO UPDATE SET name=name RETURNING id, epoch_ns");
      if (!insert.ok()) return insert.status();
      (*insert)
          ->Bind(1, job_name)
          .Bind(2, batch_min_start)
          .Bind(3, std::numeric_limits<int64_t>::max())
          .Bind(4, std::numeric_limits<int64_t>::min());
      Caches::JobState state;
      auto id =
          InsertReturningId(*insert, "creating a job failed", &state.epoch_ns);
      if (!id.ok()) return id.status();
      state.id = *id;
      job_it = caches_->jobs.emplace(job_name, state).first;
    }
    auto key = std::make_tuple(job_it->second.id, string_id[p.node()],
                               static_cast<int64_t>(p.rank()),
                               static_cast<int64_t>(p.local_rank()), p.pid());
    auto proc_it = caches_->processes.find(key);
    if (proc_it == caches_->processes.end()) {
      auto insert = Prepare(
          "INSERT INTO processes(job, node, rank, local_rank, pid) "
          "VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT DO UPDATE SET pid=pid "
          "RETURNING id");
      if (!insert.ok()) return insert.status();
      (*insert)
          ->Bind(1, std::get<0>(key))
          .Bind(2, std::get<1>(key))
          .Bind(3, std::get<2>(key))
          .Bind(4, std::get<3>(key))
          .Bind(5, std::get<4>(key));
      auto id = InsertReturningId(*insert, "storing a process failed");
      if (!id.ok()) return id.status();
      proc_it = caches_->processes.emplace(key, *id).first;
    }
    process_ref[i] = {proc_it->second, job_it->second};
  }

  std::vector<int64_t> track_id(batch.tracks_size());
  for (int i = 0; i < batch.tracks_size(); ++i) {
    const v1::Track& t = batch.tracks(i);
    auto key = std::make_tuple(process_ref[t.process()].id,
                               static_cast<int64_t>(t.kind()), t.id());
    auto it = caches_->tracks.find(key);
    if (it == caches_->tracks.end()) {
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
      it = caches_->tracks.emplace(key, *id).first;
    }
    track_id[i] = it->second;
  }

  // Running totals per job touched by this batch.
  struct Totals {
    int64_t min_start = std::numeric_limits<int64_t>::max();
    int64_t max_end = std::numeric_limits<int64_t>::min();
    int64_t max_dur = 0;
    int64_t spans = 0;
  };
  absl::flat_hash_map<int64_t, Totals> totals;

  auto insert_span = Prepare(
      "INSERT OR IGNORE INTO spans(job, start, track, k, op, dur, bytes, peer, "
      "tag, comm, comm_size, seq, step, partition, corr, kind, value, args) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
      "?15, ?16, ?17, ?18)");
  if (!insert_span.ok()) return insert_span.status();
  Statement* stmt = *insert_span;
  auto next_k = Prepare(
      "SELECT max(k) + 1 FROM spans WHERE job=?1 AND start=?2 AND track=?3");
  if (!next_k.ok()) return next_k.status();
  std::string args_blob;
  for (const v1::Span& span : batch.spans()) {
    const v1::Track& track = batch.tracks(span.track());
    const Caches::JobState& job = process_ref[track.process()].job;
    auto op_key = std::make_pair(static_cast<int64_t>(span.category()),
                                 string_id[span.name()]);
    auto op_it = caches_->ops.find(op_key);
    if (op_it == caches_->ops.end()) {
      auto insert = Prepare(
          "INSERT INTO ops(category, name) VALUES(?1, ?2) "
          "ON CONFLICT DO UPDATE SET name=name RETURNING id");
      if (!insert.ok()) return insert.status();
      (*insert)->Bind(1, op_key.first).Bind(2, op_key.second);
      auto id = InsertReturningId(*insert, "storing an operation failed");
      if (!id.ok()) return id.status();
      op_it = caches_->ops.emplace(op_key, *id).first;
    }

    args_blob.clear();
    if (span.args_size() > 0) {
      std::vector<EncodedArg> args;
      for (const v1::Arg& arg : span.args()) {
        EncodedArg encoded;
        encoded.key_id = string_id[arg.key()];
        switch (arg.value_case()) {
          case v1::Arg::kStr:
            encoded.type = EncodedArg::Type::kString;
            encoded.string_id = string_id[arg.str()];
            break;
          case v1::Arg::kReal:
            encoded.type = EncodedArg::Type::kReal;
            encoded.real_value = arg.real();
            break;
          default:
            encoded.type = EncodedArg::Type::kInt;
            encoded.int_value = arg.int_();
            break;
        }
        args.push_back(encoded);
      }
      args_blob = EncodeArgs(args);
    }

    stmt->Bind(1, job.id)
        .Bind(2, span.start_ns() - job.epoch_ns)
        .Bind(3, track_id[span.track()])
        .Bind(5, op_it->second)
        .Bind(6, span.dur_ns())
        .Bind(7, span.bytes())
        .BindOptional(8, span.has_peer(), span.peer())
        .BindOptional(9, span.has_tag(), span.tag())
        .Bind(10, static_cast<int64_t>(span.comm()))
        .Bind(11, span.comm_size())
        .BindOptional(12, span.has_seq(), span.seq())
        .BindOptional(13, span.has_step(), span.step())
        .BindOptional(14, span.has_partition(), span.partition())
        .Bind(15, static_cast<int64_t>(span.correlation()))
        .Bind(16, span.kind())
        .BindBlob(18, args_blob);
    if (span.kind() == v1::SPAN_KIND_COUNTER) {
      stmt->BindReal(17, span.value());
    } else {
      stmt->BindNull(17);
    }
    // k = 0 unless spans with the same (job, start, track) exist already;
    // then one more than the largest k stored for them (one index seek,
    // however many share the start: a coarse clock can give thousands).
    // The bindings stay across Reset(), so only k changes.
    int rc = stmt->Bind(4, int64_t{0}).Step();
    stmt->Reset();
    if (rc != SQLITE_DONE) return Fail("storing a span failed");
    if (sqlite3_changes(db_) == 0) {
      (*next_k)
          ->Bind(1, job.id)
          .Bind(2, span.start_ns() - job.epoch_ns)
          .Bind(3, track_id[span.track()]);
      rc = (*next_k)->Step();
      const int64_t k = rc == SQLITE_ROW ? (*next_k)->Int(0) : -1;
      (*next_k)->Reset();
      if (k < 0) return Fail("numbering a span failed");
      rc = stmt->Bind(4, k).Step();
      stmt->Reset();
      if (rc != SQLITE_DONE || sqlite3_changes(db_) != 1) {
        return Fail("storing a span failed");
      }
    }

    Totals& t = totals[job.id];
    t.min_start = std::min(t.min_start, span.start_ns());
    t.max_end = std::max(t.max_end, span.start_ns() + span.dur_ns());
    t.max_dur = std::max(t.max_dur, span.dur_ns());
    ++t.spans;
  }

  auto update = Prepare(
      "UPDATE jobs SET min_start_ns=min(min_start_ns, ?2), "
      "max_end_ns=max(max_end_ns, ?3), max_dur_ns=max(max_dur_ns, ?4), "
      "spans=spans+?5 WHERE id=?1");
  if (!update.ok()) return update.status();
  for (const auto& [job_id, t] : totals) {
    rc = (*update)
             ->Bind(1, job_id)
             .Bind(2, t.min_start)
             .Bind(3, t.max_end)
             .Bind(4, t.max_dur)
             .Bind(5, t.spans)
             .Step();
    (*update)->Reset();
    if (rc != SQLITE_DONE) return Fail("updating job totals failed");
  }
  result->spans_stored = batch.spans_size();
  return absl::OkStatus();
}

absl::Status Store::BeginSnapshot() {
  // A deferred transaction takes its snapshot at its first read.
  return Exec("BEGIN; SELECT count(*) FROM meta;");
}

absl::StatusOr<std::vector<JobInfo>> Store::ListJobs() {
  auto select = Prepare(
      "SELECT j.id, j.name, j.epoch_ns, j.min_start_ns, j.max_end_ns, "
      "j.max_dur_ns, j.spans, "
      "(SELECT count(DISTINCT rank) FROM processes p WHERE p.job=j.id), "
      "(SELECT count(DISTINCT node) FROM processes p WHERE p.job=j.id) "
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
    jobs.push_back(std::move(job));
  }
  (*select)->Reset();
  if (rc != SQLITE_DONE) return Fail("listing jobs failed");
  return jobs;
}

absl::StatusOr<JobCatalog> Store::LoadCatalog(const std::string& job_name) {
  auto jobs = ListJobs();
  if (!jobs.ok()) return jobs.status();
  JobCatalog catalog;
  std::vector<std::string> names;
  bool found = false;
  for (JobInfo& job : *jobs) {
    names.push_back(job.name);
    if (job.name == job_name) {
      catalog.job = std::move(job);
      found = true;
    }
  }
  if (!found) {
    return absl::NotFoundError(absl::StrCat(
        "no job \"", job_name, "\" in store ", path_, "; jobs: ",
        names.empty() ? std::string("(none)") : absl::StrJoin(names, ", ")));
  }

  auto processes = Prepare(
      "SELECT p.id, s.s, p.rank, p.local_rank, p.pid FROM processes p "
      "JOIN strings s ON s.id=p.node WHERE p.job=?1 ORDER BY p.rank, p.id");
  if (!processes.ok()) return processes.status();
  (*processes)->Bind(1, catalog.job.id);
  int rc;
  while ((rc = (*processes)->Step()) == SQLITE_ROW) {
    catalog.processes.push_back({(*processes)->Int(0), (*processes)->Text(1),
                                 static_cast<int32_t>((*processes)->Int(2)),
                                 static_cast<int32_t>((*processes)->Int(3)),
                                 (*processes)->Int(4)});
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

absl::Status Store::Scan(const JobInfo& job, const ScanRange& range,
                         const std::function<bool(const StoredSpan&)>& visit) {
  // Stored starts are relative to the job's epoch; the range is relative to
  // the job's first span. A span ending at or after `from` starts no earlier
  // than from - max_dur, which bounds the clustered-key range scan.
  const int64_t base = job.min_start_ns - job.epoch_ns;
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
  int64_t end_lo = std::numeric_limits<int64_t>::min();
  if (range.from_ns) {
    end_lo = base + *range.from_ns;
    lo = end_lo - job.max_dur_ns;
  }
  if (range.to_ns) hi = base + *range.to_ns;
  const bool by_step = range.first_step || range.last_step;
  int64_t first_step =
      range.first_step.value_or(std::numeric_limits<int64_t>::min());
  int64_t last_step =
      range.last_step.value_or(std::numeric_limits<int64_t>::max());

  // A scan gets its own statement: it may run while the caller uses others.
  sqlite3_stmt* raw = nullptr;
  const char* sql =
      "SELECT start, dur, track, op, bytes, peer, tag, comm, comm_size, seq, "
      "step, partition, corr, kind, value, args FROM spans "
      "WHERE job=?1 AND start>=?2 AND start<?3 AND start+dur>=?4 "
      "AND (?5=0 OR step BETWEEN ?6 AND ?7) ORDER BY start, track, k";
  if (sqlite3_prepare_v2(db_, sql, -1, &raw, nullptr) != SQLITE_OK) {
    return Fail("preparing a scan failed");
  }
  Statement stmt(raw);
  stmt.Bind(1, job.id).Bind(2, lo).Bind(3, hi).Bind(4, end_lo);
  stmt.Bind(5, by_step ? 1 : 0).Bind(6, first_step).Bind(7, last_step);

  StoredSpan span;
  int rc;
  while ((rc = stmt.Step()) == SQLITE_ROW) {
    span.start_ns = stmt.Int(0) + job.epoch_ns;
    span.dur_ns = stmt.Int(1);
    span.track_id = stmt.Int(2);
    span.op_id = stmt.Int(3);
    span.bytes = stmt.Int(4);
    span.peer =
        stmt.IsNull(5) ? std::nullopt : std::optional<int32_t>(stmt.Int(5));
    span.tag =
        stmt.IsNull(6) ? std::nullopt : std::optional<int32_t>(stmt.Int(6));
    span.comm = static_cast<uint64_t>(stmt.Int(7));
    span.comm_size = static_cast<uint32_t>(stmt.Int(8));
    span.seq =
        stmt.IsNull(9) ? std::nullopt : std::optional<uint64_t>(stmt.Int(9));
    span.step =
        stmt.IsNull(10) ? std::nullopt : std::optional<int64_t>(stmt.Int(10));
    span.partition =
        stmt.IsNull(11) ? std::nullopt : std::optional<int32_t>(stmt.Int(11));
    span.correlation = static_cast<uint64_t>(stmt.Int(12));
    span.kind = static_cast<v1::SpanKind>(stmt.Int(13));
    span.value = stmt.IsNull(14) ? 0 : stmt.Real(14);
    span.args.clear();
    absl::string_view blob = stmt.Blob(15);
    if (!blob.empty()) {
      auto decoded = DecodeArgs(blob);
      if (!decoded.ok()) return decoded.status();
      for (const EncodedArg& arg : *decoded) {
        StoredArg out;
        auto key = LookupString(arg.key_id);
        if (!key.ok()) return key.status();
        out.key = *key;
        switch (arg.type) {
          case EncodedArg::Type::kString: {
            out.type = StoredArg::Type::kString;
            auto s = LookupString(arg.string_id);
            if (!s.ok()) return s.status();
            out.str = *s;
            break;
          }
          case EncodedArg::Type::kInt:
            out.type = StoredArg::Type::kInt;
            out.int_value = arg.int_value;
            break;
          case EncodedArg::Type::kReal:
            out.type = StoredArg::Type::kReal;
            out.real_value = arg.real_value;
            break;
        }
        span.args.push_back(std::move(out));
      }
    }
    if (!visit(span)) return absl::OkStatus();
  }
  if (rc != SQLITE_DONE) return Fail("scanning spans failed");
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Store::FileBytes() {
  int64_t total = 0;
  for (const std::string& file : {path_, path_ + "-wal"}) {
    struct stat st;
    if (stat(file.c_str(), &st) == 0) total += st.st_size;
  }
  return total;
}

absl::StatusOr<std::vector<NodeClockModel>> Store::LoadClockModels(
    const std::string& node) {
  auto select = Prepare(
      "SELECT c.reference_ns, c.offset_ns, c.drift_ppb, c.uncertainty_ns "
      "FROM clock_models c JOIN strings s ON s.id=c.node WHERE s.s=?1 "
      "ORDER BY c.reference_ns");
  if (!select.ok()) return select.status();
  (*select)->Bind(1, node);
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

}  // namespace meridian
