// ClickHouseStore's tables, its schema version, and opening a store
// (clickhouse_store.h).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "store/clickhouse_store.h"
#include "store/clickhouse_store_parts.h"

namespace meridian {
namespace {

constexpr char kSchemaVersion[] = "1";

// The tables: their columns (the order RowBinary rows are written in), the
// engine of a table that holds rows, and the key that shards rows among a
// cluster's shards (a Distributed table over such tables: the rows of one
// job on one shard). docs/clickhouse.md explains every column.
struct Table {
  const char* name;
  const char* columns;
  const char* engine;
  const char* shard_key;
};
constexpr Table kTables[] = {
    {"meta", "key String, value String", "ReplacingMergeTree ORDER BY key",
     "cityHash64(key)"},
    {"strings", "id Int64, s String", "ReplacingMergeTree ORDER BY id", "id"},
    {"ops", "id Int64, category Int32, name Int64",
     "ReplacingMergeTree ORDER BY id", "id"},
    {"processes",
     "job Int64, id Int64, node Int64, rank Int32, local_rank Int32, "
     "pid Int64, world_size Int32, written_ns Int64, dropped Int64",
     "MergeTree ORDER BY (job, id)", "job"},
    {"tracks",
     "job Int64, id Int64, process Int64, kind Int32, ext_id Int64, "
     "name Int64, written_ns Int64",
     "MergeTree ORDER BY (job, id)", "job"},
    {"batches",
     "agent String, seq Int64, attempt Int64, job Int64, job_name String, "
     "spans Int64, written_ns Int64",
     "MergeTree ORDER BY (agent, seq)", "job"},
    {"clock_models",
     "agent String, node String, reference_ns Int64, offset_ns Int64, "
     "drift_ppb Int64, uncertainty_ns Int64",
     "ReplacingMergeTree ORDER BY (node, agent, reference_ns)",
     "cityHash64(node)"},
    {"chunks",
     "job Int64, track Int64, first_start Int64, max_end Int64, "
     "max_dur Int64, count Int64, has_step UInt8, min_step Int64, "
     "max_step Int64, bytes Int64, agent String, seq Int64, attempt Int64, "
     "part Int32, written_ns Int64, op_ids Array(Int64), "
     "strings Array(String), data String",
     // Rows are large (a chunk each): small granules, so that reading one
     // reads little else.
     "MergeTree ORDER BY (job, first_start, track) "
     "SETTINGS index_granularity = 32",
     "job"},
    {"ring_marks",
     "incarnation Int64, ring Int32, end_record Int64, agent String, "
     "seq Int64, attempt Int64",
     "MergeTree ORDER BY (incarnation, ring)", "incarnation"},
    {"op_totals",
     "job Int64, process Int64, op Int64, calls Int64, bytes Int64, "
     "dur_ns Int64, size_log2 Array(Int32), size_calls Array(Int64), "
     "size_bytes Array(Int64), size_dur_ns Array(Int64), agent String, "
     "seq Int64, attempt Int64, written_ns Int64",
     "MergeTree ORDER BY (job, process, op)", "job"},
    {"process_totals",
     "job Int64, process Int64, comm_ns Int64, elapsed_ns Int64, "
     "source String, present UInt8, user_ns Int64, system_ns Int64, "
     "max_rss_bytes Int64, context_switches Int64, agent String, seq Int64, "
     "attempt Int64, written_ns Int64",
     "MergeTree ORDER BY (job, process)", "job"},
    {"deleted_jobs", "job Int64, deleted_ns Int64", "MergeTree ORDER BY job",
     "job"},
    // Clock solutions (query/clocks/job_clocks.h): the latest row wins.
    {"clock_solutions",
     "job Int64, spans Int64, job_written_ns Int64, models Int64, "
     "solved_ns Int64, written_ns Int64, data String",
     "ReplacingMergeTree(written_ns) ORDER BY job", "job"},
    // Step summaries (query/analysis/step_summaries.h), and what they cover:
    // per step, and per job, the latest row wins.
    {"summary_states",
     "job Int64, spans Int64, job_written_ns Int64, models Int64, "
     "computed_ns Int64, written_ns Int64, data String",
     "ReplacingMergeTree(written_ns) ORDER BY job", "job"},
    {"step_summaries", "job Int64, step Int64, written_ns Int64, data String",
     "ReplacingMergeTree(written_ns) ORDER BY (job, step)", "job"},
};

}  // namespace

absl::StatusOr<std::unique_ptr<ClickHouseStore>> ClickHouseStore::Open(
    const std::string& location, StoreOptions options) {
  ClickHouseLayout layout;
  auto endpoint = ParseClickHouseLocation(location, &layout);
  if (!endpoint.ok()) return endpoint.status();
  auto client = ClickHouseClient::Connect(*endpoint);
  if (!client.ok()) return client.status();
  std::unique_ptr<ClickHouseStore> store(new ClickHouseStore(
      std::move(*client), location, options.max_cached_ids));
  store->named_ = options.name_in_errors.empty()
                      ? absl::StrCat("store ", location)
                      : options.name_in_errors;
  store->read_only_ = options.read_only;
  store->write_mark_margin_ns_ = options.write_mark_margin_ns;
  store->layout_ = layout;
  if (!options.read_only) {
    // The database may not exist yet: created through "default".
    ClickHouseEndpoint server = *endpoint;
    server.database = "default";
    auto admin = ClickHouseClient::Connect(server);
    if (!admin.ok()) return admin.status();
    absl::Status created = (*admin)->Execute(
        absl::StrCat("CREATE DATABASE IF NOT EXISTS ", endpoint->database));
    if (!created.ok()) {
      return absl::Status(created.code(),
                          absl::StrCat(store->named_, ": ", created.message()));
    }
    absl::Status schema = store->CreateSchema();
    if (!schema.ok()) {
      return absl::Status(schema.code(),
                          absl::StrCat(store->named_, ": ", schema.message()));
    }
  } else {
    // A reader of a database an older collector made: the tables of stored
    // results it lacks hold nothing (a writer creates them).
    absl::Status read = ReadRows(
        store->client_.get(),
        "SELECT name FROM system.tables WHERE database = currentDatabase() "
        "AND name IN ('clock_solutions', 'summary_states', 'step_summaries')",
        [&](RowBinaryReader& r) {
          absl::string_view name;
          if (!r.String(&name)) return false;
          store->result_tables_.insert(std::string(name));
          return true;
        });
    if (!read.ok()) {
      return absl::Status(read.code(),
                          absl::StrCat(store->named_, ": ", read.message()));
    }
  }
  return store;
}

bool ClickHouseStore::HasTable(const std::string& table) const {
  return !read_only_ || result_tables_.contains(table);
}

absl::Status ClickHouseStore::CreateSchema() {
  for (const Table& table : kTables) {
    const std::string engine =
        layout_.cluster.empty()
            ? std::string(table.engine)
            : absl::StrCat("Distributed(", layout_.cluster, ", ",
                           layout_.shards, ", ", table.name, ", ",
                           table.shard_key, ")");
    absl::Status status = client_->Execute(
        absl::StrCat("CREATE TABLE IF NOT EXISTS ", table.name, " (",
                     table.columns, ") ENGINE = ", engine));
    if (!status.ok()) return status;
  }
  // A database made before processes kept their dropped records: the
  // column is added (at the end, as the table above has it); each shard's
  // own store is upgraded by its --create-store (docs/clickhouse.md).
  int64_t has_dropped = 0;
  absl::Status columns =
      ReadRows(client_.get(),
               "SELECT toInt64(count()) FROM system.columns WHERE database = "
               "currentDatabase() AND table = 'processes' AND name = 'dropped'",
               [&](RowBinaryReader& r) { return r.Int64(&has_dropped); });
  if (!columns.ok()) return columns;
  if (has_dropped == 0) {
    absl::Status added =
        client_->Execute("ALTER TABLE processes ADD COLUMN dropped Int64");
    if (!added.ok()) return added;
  }
  // Clock evidence was a second copy of every MPI span; solves now read
  // the chunks (docs/clocks.md).
  if (absl::Status dropped =
          client_->Execute("DROP TABLE IF EXISTS clock_evidence");
      !dropped.ok()) {
    return dropped;
  }
  std::vector<std::string> versions;
  absl::Status read =
      ReadRows(client_.get(), "SELECT value FROM meta WHERE key = 'schema'",
               [&](RowBinaryReader& r) {
                 absl::string_view v;
                 if (!r.String(&v)) return false;
                 versions.emplace_back(v);
                 return true;
               });
  if (!read.ok()) return read;
  for (const std::string& v : versions) {
    if (v != kSchemaVersion) {
      return absl::FailedPreconditionError(absl::StrCat(
          "schema version ", v, ", this build knows ", kSchemaVersion,
          " (use the Meridian that made it, or a new database)"));
    }
  }
  if (versions.empty()) {
    RowBinaryWriter row;
    row.String("schema");
    row.String(kSchemaVersion);
    return client_->InsertRowBinary("meta", row.bytes());
  }
  return absl::OkStatus();
}

}  // namespace meridian
