// What the files of SqliteStore share (sqlite_store.cc: reads and
// results; sqlite_schema.cc: the schema, its upgrades and opening a store;
// sqlite_store_write.cc: writes): its prepared statements and its id
// caches. Only those files include it.
#ifndef MERIDIAN_STORE_SQLITE_STORE_PARTS_H_
#define MERIDIAN_STORE_SQLITE_STORE_PARTS_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/string_view.h"
#include "common/lru_cache.h"
#include "store/sqlite_store.h"
#include "wire/span_chunk.h"

namespace meridian {

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

}  // namespace meridian

#endif  // MERIDIAN_STORE_SQLITE_STORE_PARTS_H_
