// An SQLite database from a stranger (an Nsight Systems export, a file
// given to `meridian import`), opened and read defensively: its header
// checked against the file's size, SQLite configured against hostile
// schemas (SQLite's "Defense Against the Dark Arts"), and its tables read
// row by row with every value's type and range checked, errors naming the
// file, table, row and column.
#ifndef MERIDIAN_IMPORT_STRANGER_SQLITE_H_
#define MERIDIAN_IMPORT_STRANGER_SQLITE_H_

#include <sqlite3.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/utf8.h"
#include "wire/span_rules.h"

namespace meridian {

// Whether `head` (a file's first bytes) starts with SQLite's 16-byte magic
// "SQLite format 3\0".
bool LooksLikeSqlite(std::string_view head);

namespace stranger_sqlite {

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using Db = std::unique_ptr<sqlite3, DbCloser>;

struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

// INVALID_ARGUMENT naming `file`, `what` and SQLite's message for `db`.
absl::Status SqliteError(sqlite3* db, const std::string& file,
                         const std::string& what);

// Settings for a database from a stranger (SQLite's "Defense Against the
// Dark Arts"): its schema may not run functions, triggers or views, cell
// sizes are checked as pages are read, and no value may be huge.
absl::Status Harden(sqlite3* db, const std::string& file);

struct Column {
  const char* name;
  bool required;
};

// One pass over a table's rows, reading named columns: a required column
// the table lacks is an error, an optional one reads as NULL. Every read
// checks the value's type and names the file, table, row and column when
// it is wrong.
class TableRows {
 public:
  // `schema`: the export's schema version, for messages.
  TableRows(sqlite3* db, const std::string& file, const std::string& schema,
            const char* table)
      : db_(db), file_(file), schema_(schema), table_(table) {}

  absl::Status Open(const std::set<std::string>& present,
                    const std::vector<Column>& columns) {
    std::string sql = "SELECT ";
    for (size_t i = 0; i < columns.size(); ++i) {
      const bool has = present.count(columns[i].name) > 0;
      if (!has && columns[i].required) {
        return absl::InvalidArgumentError(
            absl::StrCat(file_, ": table ", table_, " has no column \"",
                         columns[i].name, "\" (export schema ", schema_,
                         "; this reader knows 3.x: a renamed column?)"));
      }
      columns_.push_back(columns[i].name);
      has_.push_back(has);
      absl::StrAppend(&sql, i > 0 ? ", " : "",
                      has ? absl::StrCat("\"", columns[i].name, "\"") : "NULL");
    }
    absl::StrAppend(&sql, " FROM \"", table_, "\"");
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      return SqliteError(db_, file_,
                         absl::StrCat("cannot read table ", table_));
    }
    stmt_.reset(stmt);
    return absl::OkStatus();
  }

  // Steps to the next row: true if there is one.
  absl::StatusOr<bool> Next() {
    const int rc = sqlite3_step(stmt_.get());
    if (rc == SQLITE_DONE) return false;
    if (rc != SQLITE_ROW) {
      return SqliteError(db_, file_,
                         absl::StrCat("table ", table_, " row ", row_ + 1));
    }
    ++row_;
    return true;
  }

  int64_t row() const { return row_; }
  bool Has(int i) const { return has_[i]; }
  bool Null(int i) const {
    return sqlite3_column_type(stmt_.get(), i) == SQLITE_NULL;
  }

  absl::Status Fail(int i, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(file_, ": table ", table_,
                                                   " row ", row_, ": column \"",
                                                   columns_[i], "\" ", what));
  }

  // An integer in [lo, hi]; NULL is an error.
  absl::Status Int(int i, int64_t lo, int64_t hi, int64_t* out) const {
    const int type = sqlite3_column_type(stmt_.get(), i);
    if (type == SQLITE_NULL) return Fail(i, "is NULL");
    if (type != SQLITE_INTEGER) return Fail(i, "is not an integer");
    const int64_t v = sqlite3_column_int64(stmt_.get(), i);
    if (v < lo || v > hi) {
      return Fail(i, absl::StrCat("is ", v, ", outside [", lo, ", ", hi,
                                  "]: an absurd value"));
    }
    *out = v;
    return absl::OkStatus();
  }

  // The same, NULL (or an absent column) reading as nullopt.
  absl::Status OptionalInt(int i, int64_t lo, int64_t hi,
                           std::optional<int64_t>* out) const {
    out->reset();
    if (Null(i)) return absl::OkStatus();
    int64_t v = 0;
    absl::Status status = Int(i, lo, hi, &v);
    if (status.ok()) *out = v;
    return status;
  }

  // A number, integer or real; NULL reads as nullopt.
  absl::Status OptionalReal(int i, std::optional<double>* out) const {
    out->reset();
    const int type = sqlite3_column_type(stmt_.get(), i);
    if (type == SQLITE_NULL) return absl::OkStatus();
    if (type != SQLITE_INTEGER && type != SQLITE_FLOAT) {
      return Fail(i, "is not a number");
    }
    const double v = sqlite3_column_double(stmt_.get(), i);
    if (!std::isfinite(v)) return Fail(i, "is not a finite number");
    *out = v;
    return absl::OkStatus();
  }

  // Text as valid UTF-8 of at most kMaxStringBytes; NULL reads as "".
  std::string Text(int i) const {
    const auto* text =
        reinterpret_cast<const char*>(sqlite3_column_text(stmt_.get(), i));
    const int bytes = sqlite3_column_bytes(stmt_.get(), i);
    if (text == nullptr || bytes <= 0) return "";
    const std::string_view view(text, static_cast<size_t>(bytes));
    const std::string repaired = RepairUtf8(view);
    return repaired.substr(0, Utf8Prefix(repaired, kMaxStringBytes));
  }

 private:
  sqlite3* const db_;
  const std::string& file_;
  const std::string& schema_;
  const char* const table_;
  Stmt stmt_;
  std::vector<std::string> columns_;
  std::vector<bool> has_;
  int64_t row_ = 0;
};

// The file at `path` opened read-only (`file`: its name in messages);
// NOT_FOUND if it cannot be opened, INVALID_ARGUMENT if it is not a whole
// SQLite file.
absl::StatusOr<Db> OpenStrangerSqlite(const std::string& path,
                                      const std::string& file);
// The same for a database image in memory, read in place (`image` must
// outlive the database).
absl::StatusOr<Db> OpenStrangerSqliteImage(std::string_view image,
                                           const std::string& file);

}  // namespace stranger_sqlite

using stranger_sqlite::OpenStrangerSqlite;
using stranger_sqlite::OpenStrangerSqliteImage;

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_STRANGER_SQLITE_H_
