// libmeridian_sqlite.so: SQL over a Meridian store in any SQLite client
// (docs/sql.md). Loaded into a connection whose main database is a store
//   sqlite3 meridian.db
//   sqlite> .load /usr/local/lib/libmeridian_sqlite.so
//   sqlite> SELECT rank, count(*) FROM spans WHERE job = 'j' GROUP BY rank;
// it adds the tables of tables.h to the connection. It refuses a database
// that is not a store of the schema it reads.
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "query/sql/sql_session.h"
#include "query/sql/sqlite_api.h"
#include "query/sql/tables.h"

SQLITE_EXTENSION_INIT1

namespace meridian {
namespace {

char* Message(const std::string& text) {
  return sqlite3_mprintf("%s", text.c_str());
}

// Whether this connection has the tables already (loaded twice): its
// functions are there.
bool Loaded(sqlite3* db) {
  sqlite3_stmt* stmt = nullptr;
  const bool found = sqlite3_prepare_v2(db, "SELECT meridian_scan_stats()", -1,
                                        &stmt, nullptr) == SQLITE_OK;
  sqlite3_finalize(stmt);
  return found;
}

// A temp table or view of the connection's own with a name the tables
// take; empty if none. Checked before anything is added, so that a load
// that fails leaves nothing behind.
std::string TakenName(sqlite3* db) {
  sqlite3_stmt* stmt = nullptr;
  std::string taken;
  if (sqlite3_prepare_v2(db,
                         "SELECT name FROM temp.sqlite_master WHERE name IN "
                         "('spans', 'steps', 'jobs', 'processes', 'tracks', "
                         "'counters') LIMIT 1",
                         -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    taken = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  return taken;
}

int Init(sqlite3* db, char** error) {
  if (Loaded(db)) return SQLITE_OK;
  const int schema = MeridianStoreSchema(db);
  if (schema != kSqlStoreSchema) {
    *error = Message(
        schema < 0
            ? "libmeridian_sqlite: the main database is not a Meridian store "
              "(open the collector's --db file, then load the extension)"
            : absl::StrCat("libmeridian_sqlite: the store is of schema ",
                           schema, "; this extension reads schema ",
                           kSqlStoreSchema,
                           " (open it once with this version's collector to "
                           "upgrade it)"));
    return SQLITE_ERROR;
  }
  if (const std::string taken = TakenName(db); !taken.empty()) {
    *error =
        Message(absl::StrCat("libmeridian_sqlite: this connection has a "
                             "temp table or view named ",
                             taken, " already: drop it, then load"));
    return SQLITE_ERROR;
  }
  const char* file = sqlite3_db_filename(db, "main");
  return AddMeridianTables(
      db, std::make_unique<SqlSession>(db, file == nullptr ? "" : file), error);
}

}  // namespace
}  // namespace meridian

extern "C" __attribute__((visibility("default"))) int
sqlite3_meridiansqlite_init(sqlite3* db, char** error,
                            const sqlite3_api_routines* api) {
  SQLITE_EXTENSION_INIT2(api);
  return meridian::Init(db, error);
}
