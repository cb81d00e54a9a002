#include "store/sqlite_store.h"

#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "store/chunk_merge.h"
#include "store/sqlite_store_parts.h"
#include "wire/span_chunk.h"

namespace meridian {

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
  // Told first: forgetting what was derived is safe whether or not the
  // deletion then commits.
  if (observer_ != nullptr) observer_->Deleted(id);
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

void SqliteStore::Observe(WriteObserver* observer) { observer_ = observer; }

size_t SqliteStore::cached_ids() const {
  return caches_->string_ids.size() + caches_->jobs.size() +
         caches_->processes.size() + caches_->tracks.size() +
         caches_->ops.size();
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
    StoredProcessTotals p;
    p.process_id = (*processes)->Int(0);
    p.comm_ns = (*processes)->Int(1);
    p.elapsed_ns = (*processes)->Int(2);
    p.source = (*processes)->Text(3);
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
