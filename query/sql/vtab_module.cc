#include "query/sql/vtab_module.h"

namespace meridian {

sqlite3_module ReadOnlyModule(const ReadOnlyTable& table) {
  sqlite3_module m{};
  m.iVersion = 1;
  m.xCreate = table.connect;
  m.xConnect = table.connect;
  m.xBestIndex = table.best_index;
  m.xDisconnect = table.disconnect;
  m.xDestroy = table.disconnect;
  m.xOpen = table.open;
  m.xClose = table.close;
  m.xFilter = table.filter;
  m.xNext = table.next;
  m.xEof = table.eof;
  m.xColumn = table.column;
  m.xRowid = table.rowid;
  return m;
}

int FailTable(sqlite3_vtab* vtab, SqlSession* session,
              const absl::Status& status) {
  session->set_error(status);
  sqlite3_free(vtab->zErrMsg);
  vtab->zErrMsg =
      sqlite3_mprintf("%.*s", static_cast<int>(status.message().size()),
                      status.message().data());
  return SQLITE_ERROR;
}

int InterruptTable(sqlite3_vtab* vtab) {
  sqlite3_free(vtab->zErrMsg);
  vtab->zErrMsg = sqlite3_mprintf("interrupted");
  return SQLITE_INTERRUPT;
}

}  // namespace meridian
