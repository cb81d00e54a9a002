// What the files of ClickHouseStore share (clickhouse_store.h): content
// ids, SQL string literals, reading a query's RowBinary rows, the writer's
// id caches and one Write's rows. Only those files include it.
#ifndef MERIDIAN_STORE_CLICKHOUSE_STORE_PARTS_H_
#define MERIDIAN_STORE_CLICKHOUSE_STORE_PARTS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/lru_cache.h"
#include "store/clickhouse_client.h"
#include "store/clickhouse_store.h"
#include "store/row_binary.h"
#include "wire/span_chunk.h"

namespace meridian {
namespace clickhouse {

// A SQL string literal for any bytes: printable ASCII as it is, everything
// else (quotes and backslashes included) as \xHH.
std::string Quote(absl::string_view s);
// The first 63 bits of SHA-256 over `what` (a RowBinary encoding of the
// thing's kind and fields: unambiguous), never 0.
int64_t ContentId(const RowBinaryWriter& what);
// The content ids of a string, a job (by name) and an operation.
int64_t StringId(absl::string_view s);
int64_t JobId(absl::string_view name);
int64_t OpIdOf(int64_t category, int64_t name_id);
// Runs `sql` (without FORMAT) and calls `row` for each row of its RowBinary
// result; `row` returns false if the row does not read.
absl::Status ReadRows(ClickHouseClient* client, const std::string& sql,
                      const std::function<bool(RowBinaryReader&)>& row);

}  // namespace clickhouse

// The store's files use them by these names.
using clickhouse::ContentId;
using clickhouse::JobId;
using clickhouse::OpIdOf;
using clickhouse::Quote;
using clickhouse::ReadRows;
using clickhouse::StringId;

// Ids this writer has stored rows for, to skip storing them again (rows
// are idempotent: this only saves work). Each bounded (LRU).
struct ClickHouseStore::Caches {
  explicit Caches(size_t capacity)
      : strings(capacity), ops(capacity), clock_models(capacity) {}
  LruCache<std::string, int64_t> strings;              // s -> id
  LruCache<std::pair<int64_t, int64_t>, int64_t> ops;  // (category, name)
  LruCache<std::string, bool> clock_models;            // agent, node, ref
  SpanColumns wire;
  SpanColumns piece;
};

// The rows one Write inserts, per table.
struct ClickHouseStore::WriteRows {
  int64_t attempt = 0;
  // The commit records: (agent, seq, job, job name, spans), written last
  // with a time after every other row's.
  std::vector<std::tuple<std::string, int64_t, int64_t, std::string, int64_t>>
      commits;
  RowBinaryWriter strings, ops, processes, tracks, batches, clock_models,
      chunks, ring_marks, op_totals, process_totals;
  int32_t parts = 0;
  absl::flat_hash_set<std::tuple<int64_t, int32_t, int64_t>> processes_written;
  absl::flat_hash_set<int64_t> tracks_written;
  // (incarnation, ring) -> end of what is stored, committed or this Write's.
  std::map<std::pair<int64_t, int32_t>, int64_t> marks;
};

}  // namespace meridian

#endif  // MERIDIAN_STORE_CLICKHOUSE_STORE_PARTS_H_
