#include "query/sql/step_table.h"

#include <string>
#include <vector>

#include "query/sql/vtab_module.h"

namespace meridian {
namespace {

constexpr const char* kDeclaration =
    "CREATE TABLE x(job TEXT, rank INTEGER, step INTEGER, start_ns INTEGER, "
    "dur_ns INTEGER, end_ns INTEGER, compute_ns INTEGER, "
    "communication_ns INTEGER, overlap_ns INTEGER, setup_ns INTEGER)";
enum Column {
  kJob,
  kRank,
  kStep,
  kStart,
  kDur,
  kEnd,
  kCompute,
  kComm,
  kOverlap,
  kSetup
};

struct StepTable {
  sqlite3_vtab base;  // first
  SqlSession* session;
};

struct StepRow {
  int64_t step;
  v1::RankStep rank;
};

struct StepCursor {
  sqlite3_vtab_cursor base;  // first
  StepTable* table;
  std::vector<std::string> jobs;
  size_t next_job = 0;
  std::string job;  // the job `rows` are of
  std::vector<StepRow> rows;
  size_t at = 0;
  bool eof = false;
};

int Connect(sqlite3* db, void* aux, int, const char* const*, sqlite3_vtab** out,
            char**) {
  // The tables' own statement, whatever authorizer the connection has.
  SqlSession::Internal internal(static_cast<SqlSession*>(aux));
  int rc = sqlite3_declare_vtab(db, kDeclaration);
  if (rc != SQLITE_OK) return rc;
  auto* table = new StepTable();
  table->session = static_cast<SqlSession*>(aux);
  *out = &table->base;
  return SQLITE_OK;
}

int Disconnect(sqlite3_vtab* vtab) {
  delete reinterpret_cast<StepTable*>(vtab);
  return SQLITE_OK;
}

// Only job = J is handed down (plan 1): a job's steps are made whole.
int BestIndex(sqlite3_vtab*, sqlite3_index_info* info) {
  info->idxNum = 0;
  info->estimatedCost = 1e6;
  info->estimatedRows = 1000000;
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (c.usable && c.iColumn == kJob && c.op == SQLITE_INDEX_CONSTRAINT_EQ) {
      info->aConstraintUsage[i].argvIndex = 1;
      info->idxNum = 1;
      info->estimatedCost = 1e4;
      info->estimatedRows = 10000;
      break;
    }
  }
  return SQLITE_OK;
}

int Open(sqlite3_vtab* vtab, sqlite3_vtab_cursor** out) {
  auto* cursor = new StepCursor();
  cursor->table = reinterpret_cast<StepTable*>(vtab);
  *out = &cursor->base;
  return SQLITE_OK;
}

int Close(sqlite3_vtab_cursor* cur) {
  delete reinterpret_cast<StepCursor*>(cur);
  return SQLITE_OK;
}

int Fail(StepCursor* c, const absl::Status& status) {
  return FailTable(&c->table->base, c->table->session, status);
}

// Moves to the next row, loading the next job's steps where one runs out.
int Advance(StepCursor* c) {
  while (++c->at >= c->rows.size()) {
    if (c->next_job >= c->jobs.size()) {
      c->eof = true;
      return SQLITE_OK;
    }
    if (c->table->session->ShouldStop()) {
      return InterruptTable(&c->table->base);
    }
    c->job = c->jobs[c->next_job++];
    auto reply = c->table->session->Steps(c->job);
    if (!reply.ok()) return Fail(c, reply.status());
    c->rows.clear();
    for (const v1::StepSummary& step : reply->steps()) {
      for (const v1::RankStep& rank : step.ranks()) {
        c->rows.push_back({step.step(), rank});
      }
    }
    c->at = static_cast<size_t>(-1);
  }
  return SQLITE_OK;
}

int Filter(sqlite3_vtab_cursor* cur, int plan, const char*, int argc,
           sqlite3_value** argv) {
  auto* c = reinterpret_cast<StepCursor*>(cur);
  std::optional<std::string> job;
  c->jobs.clear();
  c->rows.clear();
  c->next_job = 0;
  c->at = static_cast<size_t>(-1);
  c->eof = false;
  if (plan == 1 && argc == 1) {
    if (sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
      c->eof = true;  // job names are text: no row is equal
      return SQLITE_OK;
    }
    job.emplace(reinterpret_cast<const char*>(sqlite3_value_text(argv[0])),
                sqlite3_value_bytes(argv[0]));
  }
  auto jobs = c->table->session->JobNames(job);
  if (!jobs.ok()) return Fail(c, jobs.status());
  c->jobs = std::move(*jobs);
  return Advance(c);
}

int Next(sqlite3_vtab_cursor* cur) {
  return Advance(reinterpret_cast<StepCursor*>(cur));
}

int Eof(sqlite3_vtab_cursor* cur) {
  return reinterpret_cast<StepCursor*>(cur)->eof ? 1 : 0;
}

// Unique across the scan's jobs (SQLite's OR plans drop repeats by rowid).
int Rowid(sqlite3_vtab_cursor* cur, sqlite3_int64* out) {
  auto* c = reinterpret_cast<StepCursor*>(cur);
  *out =
      (static_cast<int64_t>(c->next_job) << 32) | static_cast<int64_t>(c->at);
  return SQLITE_OK;
}

int ColumnValue(sqlite3_vtab_cursor* cur, sqlite3_context* ctx, int column) {
  auto* c = reinterpret_cast<StepCursor*>(cur);
  const StepRow& row = c->rows[c->at];
  const v1::RankStep& r = row.rank;
  int64_t v = 0;
  switch (column) {
    case kJob:
      sqlite3_result_text(ctx, c->job.data(), static_cast<int>(c->job.size()),
                          SQLITE_TRANSIENT);
      return SQLITE_OK;
    case kRank:
      v = r.rank();
      break;
    case kStep:
      v = row.step;
      break;
    case kStart:
      v = r.start_ns();
      break;
    case kDur:
      v = r.dur_ns();
      break;
    case kEnd:
      v = r.start_ns() + r.dur_ns();
      break;
    case kCompute:
      v = r.compute_ns();
      break;
    case kComm:
      v = r.communication_ns();
      break;
    case kOverlap:
      v = r.overlap_ns();
      break;
    case kSetup:
      v = r.setup_ns();
      break;
    default:
      sqlite3_result_null(ctx);
      return SQLITE_OK;
  }
  sqlite3_result_int64(ctx, v);
  return SQLITE_OK;
}

const sqlite3_module kStepModule =
    ReadOnlyModule({Connect, BestIndex, Disconnect, Open, Close, Filter, Next,
                    Eof, ColumnValue, Rowid});

}  // namespace

int RegisterStepModule(sqlite3* db, SqlSession* session) {
  return sqlite3_create_module_v2(db, "meridian_steps", &kStepModule, session,
                                  nullptr);
}

}  // namespace meridian
