#include "query/sql/sql_query.h"

#include <strings.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "query/sql/sqlite_api.h"
#include "query/sql/tables.h"

namespace meridian {
namespace {

// What a statement may do, and what stopped it.
struct Guard {
  SqlSession* session = nullptr;
  std::string refused;  // the first thing the authorizer refused
  absl::Time deadline;
  std::function<bool()> cancelled;
  int64_t memory_start = 0;
  int64_t memory_limit = 0;
  enum class Stop { kNone, kTime, kMemory, kCancel } stop = Stop::kNone;
};

int Refuse(Guard* guard, std::string what) {
  if (guard->refused.empty()) guard->refused = std::move(what);
  return SQLITE_DENY;
}

int Authorize(void* data, int action, const char* a, const char* b,
              const char* db, const char*) {
  auto* guard = static_cast<Guard*>(data);
  if (guard->session->internal()) return SQLITE_OK;  // the tables' own
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_FUNCTION:
      // load_extension loads code; fts3_tokenizer hands out a pointer into
      // SQLite (and, given two arguments, installs one).
      for (const char* refused : {"load_extension", "fts3_tokenizer"}) {
        if (b != nullptr && strcasecmp(b, refused) == 0) {
          return Refuse(guard, absl::StrCat(refused, "()"));
        }
      }
      return SQLITE_OK;
    case SQLITE_READ:
      // The tables are in temp; a CTE or subquery has no schema. The
      // store's own tables are main's.
      if (db == nullptr || strcmp(db, "temp") == 0) return SQLITE_OK;
      return Refuse(guard,
                    absl::StrCat("reading the store's table ", a ? a : "?",
                                 " (query spans, steps, "
                                 "jobs, processes, tracks, counters)"));
    case SQLITE_ATTACH:
      return Refuse(guard, "ATTACH");
    case SQLITE_PRAGMA:
      return Refuse(guard, absl::StrCat("PRAGMA ", a ? a : ""));
    case SQLITE_UPDATE:
      // What SQLite asks before it makes an eponymous virtual table.
      if (a != nullptr && strcmp(a, "sqlite_master") == 0) {
        return Refuse(guard, "a table-valued function (pragma_*, json_each)");
      }
      return Refuse(guard, "UPDATE");
    default:
      return Refuse(guard,
                    "anything but a SELECT (writes, schema changes, "
                    "transactions)");
  }
}

int Progress(void* data) {
  auto* guard = static_cast<Guard*>(data);
  if (guard->cancelled && guard->cancelled()) {
    guard->stop = Guard::Stop::kCancel;
  } else if (absl::Now() > guard->deadline) {
    guard->stop = Guard::Stop::kTime;
  } else if (sqlite3_memory_used() - guard->memory_start >
             guard->memory_limit) {
    guard->stop = Guard::Stop::kMemory;
  }
  return guard->stop == Guard::Stop::kNone ? 0 : 1;
}

// A connection, closed when it goes (its session with it).
struct Connection {
  sqlite3* db = nullptr;
  sqlite3_stmt* stmt = nullptr;
  ~Connection() {
    sqlite3_finalize(stmt);
    sqlite3_close(db);
  }
};

absl::Status Stopped(const Guard& guard, const SqlLimits& limits, sqlite3* db) {
  switch (guard.stop) {
    case Guard::Stop::kTime:
      // Not DEADLINE_EXCEEDED: a client reads that as its own deadline.
      return absl::ResourceExhaustedError(absl::StrCat(
          "the query ran past its ", absl::FormatDuration(limits.timeout),
          " and was stopped (narrow it: a job, ranks, steps)"));
    case Guard::Stop::kMemory:
      return absl::ResourceExhaustedError(absl::StrCat(
          "the query took more than ", limits.max_memory_bytes >> 20,
          " MiB of memory and was stopped (narrow it, or group less)"));
    case Guard::Stop::kCancel:
      return absl::CancelledError("the query was cancelled");
    case Guard::Stop::kNone:
      break;
  }
  // A table's own failure (a chunk that does not decode, the store gone)
  // keeps its status; the rest is the statement's (a bad argument).
  if (!guard.session->error().ok()) return guard.session->error();
  return absl::InvalidArgumentError(sqlite3_errmsg(db));
}

// Opens the store and adds the tables, scoped.
absl::Status Open(const std::string& path, const v1::SqlRequest& request,
                  const std::function<bool(const std::string&)>& may_read,
                  Connection* c, Guard* guard) {
  if (sqlite3_open_v2(path.c_str(), &c->db,
                      SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    return absl::UnavailableError("cannot open the collector's store");
  }
  sqlite3_busy_timeout(c->db, 10000);
  if (MeridianStoreSchema(c->db) != kSqlStoreSchema) {
    return absl::FailedPreconditionError(
        "the collector's store is not of the schema the SQL tables read");
  }
  // Sorts, groups and the tables' copies in memory, where the memory bound
  // sees them (a temp file would grow unseen). First: changing it later
  // drops the temp schema.
  sqlite3_exec(c->db, "PRAGMA temp_store = MEMORY", nullptr, nullptr, nullptr);
  auto session = std::make_unique<SqlSession>(c->db, path);
  const std::string only = request.job();
  session->set_may_read([only, may_read](const std::string& job) {
    return (only.empty() || job == only) && (!may_read || may_read(job));
  });
  guard->session = session.get();
  // jobs, processes and tracks as copies of what the caller may read, of
  // those the statement names.
  TableForms forms;
  forms.copies = true;
  const std::string lower = absl::AsciiStrToLower(request.query());
  forms.wanted = [&lower](const char* name) {
    return lower.find(name) != std::string::npos;
  };
  char* error = nullptr;
  if (AddMeridianTables(c->db, std::move(session), &error, forms) !=
      SQLITE_OK) {
    std::string message = error ? error : sqlite3_errmsg(c->db);
    sqlite3_free(error);
    return absl::InternalError(absl::StrCat("the SQL tables: ", message));
  }
  guard->session->set_should_stop([guard] { return Progress(guard) != 0; });
  // Nothing may be written, and nothing in the schema is trusted to run
  // functions.
  sqlite3_exec(c->db, "PRAGMA query_only = 1", nullptr, nullptr, nullptr);
  sqlite3_db_config(c->db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(c->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_limit(c->db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(c->db, SQLITE_LIMIT_SQL_LENGTH, 100000);
  sqlite3_limit(c->db, SQLITE_LIMIT_LENGTH, 16 << 20);
  sqlite3_set_authorizer(c->db, Authorize, guard);
  sqlite3_progress_handler(c->db, 10000, Progress, guard);
  return absl::OkStatus();
}

absl::Status Prepare(const std::string& query, Connection* c, Guard* guard) {
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(c->db, query.data(), static_cast<int>(query.size()),
                         &c->stmt, &tail) != SQLITE_OK) {
    if (!guard->refused.empty()) {
      return absl::PermissionDeniedError(
          absl::StrCat("meridian sql runs one read-only SELECT over the "
                       "tables of docs/sql.md: ",
                       guard->refused, " is refused"));
    }
    const std::string message = sqlite3_errmsg(c->db);
    if (message.find("may not be modified") != std::string::npos) {
      return absl::PermissionDeniedError(message);
    }
    return absl::InvalidArgumentError(message);
  }
  if (c->stmt == nullptr) {
    return absl::InvalidArgumentError("the query holds no SQL statement");
  }
  // What follows must hold no statement (whitespace, ';', comments): the
  // rest is prepared, never run, to tell.
  sqlite3_stmt* next = nullptr;
  const std::string refused = guard->refused;
  const int rest = tail == nullptr
                       ? SQLITE_OK
                       : sqlite3_prepare_v2(c->db, tail, -1, &next, nullptr);
  const bool more = rest != SQLITE_OK || next != nullptr;
  sqlite3_finalize(next);
  guard->refused = refused;
  if (more) {
    return absl::InvalidArgumentError(
        "meridian sql runs one statement at a time: remove what follows the "
        "first");
  }
  if (!sqlite3_stmt_readonly(c->stmt)) {
    return absl::PermissionDeniedError(
        "meridian sql runs read-only statements only");
  }
  return absl::OkStatus();
}

void AddValue(sqlite3_stmt* stmt, int i, v1::SqlValue* value) {
  switch (sqlite3_column_type(stmt, i)) {
    case SQLITE_INTEGER:
      value->set_integer(sqlite3_column_int64(stmt, i));
      break;
    case SQLITE_FLOAT:
      value->set_real(sqlite3_column_double(stmt, i));
      break;
    case SQLITE_TEXT:
      value->set_text(
          reinterpret_cast<const char*>(sqlite3_column_text(stmt, i)),
          sqlite3_column_bytes(stmt, i));
      break;
    case SQLITE_BLOB:
      value->set_blob(sqlite3_column_blob(stmt, i),
                      sqlite3_column_bytes(stmt, i));
      break;
    default:
      break;  // NULL: none set
  }
}

}  // namespace

absl::StatusOr<v1::SqlReply> RunSql(
    const std::string& store_path, const v1::SqlRequest& request,
    const SqlLimits& limits,
    const std::function<bool(const std::string& job)>& may_read,
    std::function<bool()> cancelled) {
  if (request.max_rows() < 0 || request.max_rows() > limits.max_rows_cap) {
    return absl::InvalidArgumentError(absl::StrCat("max_rows must be 0 (",
                                                   limits.default_rows, ") to ",
                                                   limits.max_rows_cap));
  }
  const int64_t max_rows =
      request.max_rows() == 0 ? limits.default_rows : request.max_rows();
  Connection c;
  Guard guard;
  guard.cancelled = std::move(cancelled);
  guard.memory_limit = limits.max_memory_bytes;
  guard.deadline = std::min(absl::Now() + limits.timeout, limits.deadline);
  guard.memory_start = sqlite3_memory_used();
  if (absl::Status opened = Open(store_path, request, may_read, &c, &guard);
      !opened.ok()) {
    return opened;
  }
  if (absl::Status prepared = Prepare(request.query(), &c, &guard);
      !prepared.ok()) {
    return prepared;
  }
  v1::SqlReply reply;
  const int columns = sqlite3_column_count(c.stmt);
  for (int i = 0; i < columns; ++i) {
    const char* name = sqlite3_column_name(c.stmt, i);
    reply.add_columns(name == nullptr ? "" : name);
  }
  int64_t bytes = 0;
  int rc;
  while ((rc = sqlite3_step(c.stmt)) == SQLITE_ROW) {
    if (reply.rows_size() >= max_rows) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the query returns more than ", max_rows, " rows (--max-rows, up to ",
          limits.max_rows_cap, "; or aggregate, or LIMIT)"));
    }
    v1::SqlRow* row = reply.add_rows();
    for (int i = 0; i < columns; ++i) AddValue(c.stmt, i, row->add_values());
    // What the row takes in memory: about 40 bytes a value besides its
    // own (a NULL is 2 bytes on the wire).
    bytes += static_cast<int64_t>(row->ByteSizeLong()) + 40 * columns;
    if (bytes > limits.max_reply_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the query's rows take more than ", limits.max_reply_bytes >> 20,
          " MiB (select fewer columns or rows)"));
    }
  }
  if (rc != SQLITE_DONE) return Stopped(guard, limits, c.db);
  return reply;
}

}  // namespace meridian
