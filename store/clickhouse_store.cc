#include "store/clickhouse_store.h"

#include <openssl/evp.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/lru_cache.h"
#include "store/chunk_merge.h"
#include "store/chunk_rows.h"
#include "store/row_binary.h"
#include "store/track_spans.h"
#include "wire/batch_spans.h"
#include "wire/batch_validator.h"
#include "wire/span_chunk.h"

namespace meridian {
namespace {

constexpr char kSchemaVersion[] = "1";
constexpr int64_t kMaxTime = std::numeric_limits<int64_t>::max();

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

// Tables whose rows belong to one job, reclaimed when it is deleted.
constexpr const char* kJobTables[] = {
    "processes",      "tracks",          "chunks",         "op_totals",
    "process_totals", "clock_solutions", "summary_states", "step_summaries"};

// A SQL string literal for any bytes: printable ASCII as it is, everything
// else (quotes and backslashes included) as \xHH.
std::string Quote(absl::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  out += "'";
  return out;
}

// The first 63 bits of SHA-256 over `what` (a RowBinary encoding of the
// thing's kind and fields: unambiguous), never 0.
int64_t ContentId(const RowBinaryWriter& what) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(what.bytes().data(), what.bytes().size(), digest, &size,
             EVP_sha256(), nullptr);
  uint64_t id = 0;
  memcpy(&id, digest, sizeof id);
  id &= 0x7fffffffffffffffull;
  return id == 0 ? 1 : static_cast<int64_t>(id);
}

int64_t StringId(absl::string_view s) {
  RowBinaryWriter w;
  w.String("string");
  w.String(s);
  return ContentId(w);
}

int64_t JobId(absl::string_view name) {
  RowBinaryWriter w;
  w.String("job");
  w.String(name);
  return ContentId(w);
}

int64_t OpIdOf(int64_t category, int64_t name_id) {
  RowBinaryWriter w;
  w.String("op");
  w.Int64(category);
  w.Int64(name_id);
  return ContentId(w);
}

// Runs `sql` (without FORMAT) and calls `row` for each row of its RowBinary
// result; `row` returns false if the row does not read.
absl::Status ReadRows(ClickHouseClient* client, const std::string& sql,
                      const std::function<bool(RowBinaryReader&)>& row) {
  auto result = client->Query(sql + " FORMAT RowBinary");
  if (!result.ok()) return result.status();
  RowBinaryReader reader(*result);
  while (!reader.done()) {
    if (!row(reader)) {
      return absl::DataLossError(
          absl::StrCat("ClickHouse sent a row this build cannot read for: ",
                       sql.substr(0, 120)));
    }
  }
  return absl::OkStatus();
}

// A database, cluster or table name: letters, digits and _, 1 to 64.
bool IsName(const std::string& name) {
  return !name.empty() && name.size() <= 64 &&
         std::all_of(name.begin(), name.end(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '_'; });
}

std::string Int64Array(const std::vector<int64_t>& values) {
  return absl::StrCat("CAST([", absl::StrJoin(values, ","),
                      "] AS Array(Int64))");
}

}  // namespace

bool IsClickHouseLocation(const std::string& location) {
  return absl::StartsWith(location, "clickhouse://");
}

absl::StatusOr<ClickHouseEndpoint> ParseClickHouseLocation(
    const std::string& location, ClickHouseLayout* layout) {
  if (!IsClickHouseLocation(location)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", location,
                     "\" is not a ClickHouse store (clickhouse://HOST"
                     "[:PORT][/DATABASE])"));
  }
  absl::string_view rest = absl::string_view(location).substr(13);
  ClickHouseLayout parsed_layout;
  if (const size_t question = rest.find('?');
      question != absl::string_view::npos) {
    for (absl::string_view pair :
         absl::StrSplit(rest.substr(question + 1), '&')) {
      const size_t equals = pair.find('=');
      const absl::string_view key = pair.substr(0, equals);
      const std::string value = equals == absl::string_view::npos
                                    ? std::string()
                                    : std::string(pair.substr(equals + 1));
      if (!IsName(value)) {
        return absl::InvalidArgumentError(
            absl::StrCat("ClickHouse location: \"", pair,
                         "\": cluster=NAME and shards=DATABASE, names of "
                         "letters, digits and _"));
      }
      if (key == "cluster") {
        parsed_layout.cluster = value;
      } else if (key == "shards") {
        parsed_layout.shards = value;
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "ClickHouse location: unknown parameter \"", key,
            "\" (cluster=NAME&shards=DATABASE make a Distributed store)"));
      }
    }
    if (parsed_layout.cluster.empty() != parsed_layout.shards.empty()) {
      return absl::InvalidArgumentError(
          "ClickHouse location: cluster= and shards= go together");
    }
    rest = rest.substr(0, question);
  }
  if (layout != nullptr) *layout = parsed_layout;
  ClickHouseEndpoint endpoint;
  endpoint.database = "meridian";
  if (rest.find('@') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        "a ClickHouse store's location carries no user or password (command "
        "lines are visible to every user of the machine): set "
        "MERIDIAN_CLICKHOUSE_CREDENTIALS to a file holding USER:PASSWORD, or "
        "MERIDIAN_CLICKHOUSE_USER and MERIDIAN_CLICKHOUSE_PASSWORD");
  }
  const size_t slash = rest.find('/');
  absl::string_view host_port = rest.substr(0, slash);
  if (slash != absl::string_view::npos && slash + 1 < rest.size()) {
    endpoint.database = std::string(rest.substr(slash + 1));
  }
  if (!IsName(endpoint.database)) {
    return absl::InvalidArgumentError(
        absl::StrCat("ClickHouse database \"", endpoint.database,
                     "\": letters, digits and _ only, at most 64"));
  }
  const size_t colon = host_port.rfind(':');
  endpoint.host = std::string(host_port.substr(0, colon));
  if (colon != absl::string_view::npos) {
    int port = 0;
    if (!absl::SimpleAtoi(host_port.substr(colon + 1), &port) || port < 1 ||
        port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("ClickHouse port \"", host_port.substr(colon + 1),
                       "\" is not 1 to 65535"));
    }
    endpoint.port = port;
  }
  if (endpoint.host.empty() ||
      !std::all_of(endpoint.host.begin(), endpoint.host.end(), [](char c) {
        return absl::ascii_isalnum(c) || c == '.' || c == '-' || c == '[' ||
               c == ']' || c == ':';
      })) {
    return absl::InvalidArgumentError(
        absl::StrCat("ClickHouse host \"", endpoint.host, "\" is not a name"));
  }

  if (const char* file = getenv("MERIDIAN_CLICKHOUSE_CREDENTIALS")) {
    struct stat st;
    if (stat(file, &st) != 0 || !S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "MERIDIAN_CLICKHOUSE_CREDENTIALS: cannot read \"", file, "\""));
    }
    if ((st.st_mode & 077) != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("MERIDIAN_CLICKHOUSE_CREDENTIALS: \"", file,
                       "\" may be read by other users (chmod 600 it)"));
    }
    std::ifstream in(file);
    std::string line;
    std::getline(in, line);
    const size_t sep = line.find(':');
    if (!in || sep == std::string::npos || sep == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("MERIDIAN_CLICKHOUSE_CREDENTIALS: \"", file,
                       "\" does not start with a USER:PASSWORD line"));
    }
    endpoint.user = line.substr(0, sep);
    endpoint.password = line.substr(sep + 1);
    return endpoint;
  }
  if (const char* user = getenv("MERIDIAN_CLICKHOUSE_USER")) {
    endpoint.user = user;
  }
  if (const char* password = getenv("MERIDIAN_CLICKHOUSE_PASSWORD")) {
    endpoint.password = password;
  }
  return endpoint;
}

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

ClickHouseStore::ClickHouseStore(std::unique_ptr<ClickHouseClient> client,
                                 std::string location, size_t max_cached_ids)
    : client_(std::move(client)),
      location_(std::move(location)),
      max_cached_ids_(max_cached_ids),
      caches_(std::make_unique<Caches>(max_cached_ids)),
      random_(std::random_device()()) {}

ClickHouseStore::~ClickHouseStore() = default;

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

int64_t ClickHouseStore::Now() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  // Strictly increasing for this writer, whatever the clock does.
  last_now_ =
      std::max<int64_t>(last_now_ + 1, ts.tv_sec * 1000000000LL + ts.tv_nsec);
  return last_now_;
}

size_t ClickHouseStore::cached_ids() const {
  return caches_->strings.size() + caches_->ops.size() +
         caches_->clock_models.size();
}

absl::Status ClickHouseStore::BeginSnapshot() {
  snapshot_ns_ = Now();
  deletions_.reset();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<BatchWriteResult>> ClickHouseStore::Write(
    absl::Span<const v1::Batch* const> batches,
    absl::Span<std::vector<SpanColumns>* const> decoded) {
  std::vector<BatchWriteResult> results(batches.size());
  if (batches.empty()) return results;
  if (read_only_) {
    return absl::FailedPreconditionError(
        absl::StrCat(named_, " is open read-only"));
  }
  WriteRows rows;
  rows.attempt = static_cast<int64_t>(random_() >> 1) | 1;
  const int64_t now = Now();

  // Which batches are stored already (or repeat one of this call).
  std::vector<std::string> keys;
  for (const v1::Batch* batch : batches) {
    keys.push_back(absl::StrCat("(", Quote(batch->agent_id()), ",",
                                static_cast<int64_t>(batch->batch_seq()), ")"));
  }
  std::set<std::pair<std::string, int64_t>> stored;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT DISTINCT agent, seq FROM batches WHERE (agent, seq) "
                   "IN (",
                   absl::StrJoin(keys, ","), ")"),
      [&](RowBinaryReader& r) {
        absl::string_view agent;
        int64_t seq;
        if (!r.String(&agent) || !r.Int64(&seq)) return false;
        stored.emplace(std::string(agent), seq);
        return true;
      });
  if (!read.ok()) return read;

  // What the rings' records already stored reach, as committed.
  std::vector<std::string> rings;
  for (const v1::Batch* batch : batches) {
    for (const v1::RingRange& range : batch->rings()) {
      rings.push_back(absl::StrCat("(",
                                   static_cast<int64_t>(range.incarnation()),
                                   ",", range.ring(), ")"));
    }
  }
  if (!rings.empty()) {
    const std::string in = absl::StrCat("(", absl::StrJoin(rings, ","), ")");
    read = ReadRows(
        client_.get(),
        absl::StrCat(
            "SELECT incarnation, ring, max(end_record) FROM ring_marks WHERE "
            "(incarnation, ring) IN ",
            in,
            " AND (agent, seq, attempt) GLOBAL IN (SELECT agent, seq, "
            "min(attempt) FROM batches WHERE agent GLOBAL IN (SELECT agent "
            "FROM ring_marks WHERE (incarnation, ring) IN ",
            in, ") GROUP BY agent, seq) GROUP BY incarnation, ring"),
        [&](RowBinaryReader& r) {
          int64_t incarnation, end;
          int32_t ring;
          if (!r.Int64(&incarnation) || !r.Int32(&ring) || !r.Int64(&end)) {
            return false;
          }
          rows.marks[{incarnation, ring}] = end;
          return true;
        });
    if (!read.ok()) return read;
  }

  absl::Status status;
  for (size_t i = 0; i < batches.size() && status.ok(); ++i) {
    const v1::Batch& batch = *batches[i];
    if (!stored
             .emplace(batch.agent_id(), static_cast<int64_t>(batch.batch_seq()))
             .second) {
      results[i].duplicate = true;
      continue;
    }
    status = WriteOne(batch, decoded.empty() ? nullptr : decoded[i], now, &rows,
                      &results[i]);
  }
  // Everything but the commit record, then the record.
  const std::pair<const char*, RowBinaryWriter*> order[] = {
      {"strings", &rows.strings},
      {"ops", &rows.ops},
      {"processes", &rows.processes},
      {"tracks", &rows.tracks},
      {"clock_models", &rows.clock_models},
      {"op_totals", &rows.op_totals},
      {"process_totals", &rows.process_totals},
      {"chunks", &rows.chunks},
      {"ring_marks", &rows.ring_marks},
  };
  for (const auto& [table, writer] : order) {
    if (!status.ok()) break;
    if (!writer->bytes().empty()) {
      status = client_->InsertRowBinary(table, writer->bytes());
    }
  }
  if (status.ok() && before_commit_) status = before_commit_();
  if (status.ok() && !rows.commits.empty()) {
    last_now_ = std::max(last_now_, now + rows.parts);
    const int64_t committed = Now();  // after every row of the attempt
    for (const auto& [agent, seq, job, name, spans] : rows.commits) {
      rows.batches.String(agent);
      rows.batches.Int64(seq);
      rows.batches.Int64(rows.attempt);
      rows.batches.Int64(job);
      rows.batches.String(name);
      rows.batches.Int64(spans);
      rows.batches.Int64(committed);
    }
    status = client_->InsertRowBinary("batches", rows.batches.bytes());
  }
  if (!status.ok()) {
    // The cached ids may name rows that were never inserted.
    caches_ = std::make_unique<Caches>(max_cached_ids_);
    return status;
  }
  return results;
}

absl::Status ClickHouseStore::WriteOne(const v1::Batch& batch,
                                       std::vector<SpanColumns>* decoded,
                                       int64_t now, WriteRows* rows,
                                       BatchWriteResult* result) {
  // Strings.
  std::vector<int64_t> string_id(batch.strings_size());
  for (int i = 0; i < batch.strings_size(); ++i) {
    const std::string& s = batch.strings(i);
    if (const int64_t* cached = caches_->strings.Find(s)) {
      string_id[i] = *cached;
      continue;
    }
    string_id[i] = StringId(s);
    caches_->strings.Insert(s, string_id[i]);
    rows->strings.Int64(string_id[i]);
    rows->strings.String(s);
  }
  const auto op_id = [&](int64_t category, int64_t name) {
    const auto key = std::make_pair(category, string_id[name]);
    if (const int64_t* cached = caches_->ops.Find(key)) return *cached;
    const int64_t id = OpIdOf(category, key.second);
    caches_->ops.Insert(key, id);
    rows->ops.Int64(id);
    rows->ops.Int32(static_cast<int32_t>(category));
    rows->ops.Int64(key.second);
    return id;
  };

  // Processes and their jobs; the batch's commit records, one per job.
  struct ProcessRef {
    int64_t id;
    int64_t job;
  };
  std::vector<ProcessRef> process(batch.processes_size());
  std::vector<std::pair<int64_t, std::string>> jobs;
  for (int i = 0; i < batch.processes_size(); ++i) {
    const v1::Process& p = batch.processes(i);
    const std::string& job_name = batch.strings(p.job());
    const int64_t job = JobId(job_name);
    RowBinaryWriter key;
    key.String("process");
    key.Int64(job);
    key.Int64(string_id[p.node()]);
    key.Int32(p.rank());
    key.Int32(p.local_rank());
    key.Int64(p.pid());
    process[i] = {ContentId(key), job};
    if (std::find_if(jobs.begin(), jobs.end(), [&](const auto& j) {
          return j.first == job;
        }) == jobs.end()) {
      jobs.emplace_back(job, job_name);
    }
    // A row again once the world size or the dropped count changes; a
    // reader takes each process's largest.
    const int64_t dropped = static_cast<int64_t>(p.dropped());
    if (!rows->processes_written.emplace(process[i].id, p.world_size(), dropped)
             .second) {
      continue;
    }
    rows->processes.Int64(job);
    rows->processes.Int64(process[i].id);
    rows->processes.Int64(string_id[p.node()]);
    rows->processes.Int32(p.rank());
    rows->processes.Int32(p.local_rank());
    rows->processes.Int64(p.pid());
    rows->processes.Int32(p.world_size());
    rows->processes.Int64(now);
    rows->processes.Int64(dropped);
  }
  const int64_t seq = static_cast<int64_t>(batch.batch_seq());
  if (jobs.empty()) jobs.emplace_back(0, "");
  for (const auto& [job, name] : jobs) {
    rows->commits.emplace_back(batch.agent_id(), seq, job, name,
                               SpanCount(batch));
  }
  const auto origin = [&](RowBinaryWriter* w) {
    w->String(batch.agent_id());
    w->Int64(seq);
    w->Int64(rows->attempt);
  };

  // Tracks.
  std::vector<int64_t> track_id(batch.tracks_size());
  for (int i = 0; i < batch.tracks_size(); ++i) {
    const v1::Track& t = batch.tracks(i);
    RowBinaryWriter key;
    key.String("track");
    key.Int64(process[t.process()].id);
    key.Int32(t.kind());
    key.Int64(t.id());
    track_id[i] = ContentId(key);
    if (!rows->tracks_written.insert(track_id[i]).second) continue;
    rows->tracks.Int64(process[t.process()].job);
    rows->tracks.Int64(track_id[i]);
    rows->tracks.Int64(process[t.process()].id);
    rows->tracks.Int32(t.kind());
    rows->tracks.Int64(t.id());
    rows->tracks.Int64(string_id[t.name()]);
    rows->tracks.Int64(now);
  }

  // The clock model, once per (agent, node, reference).
  if (HasClockModel(batch)) {
    const v1::ClockModel& clock = batch.clock();
    const std::string key =
        absl::StrCat(batch.agent_id(), "\x1f", batch.strings(clock.node()),
                     "\x1f", clock.reference_ns());
    if (caches_->clock_models.Find(key) == nullptr) {
      caches_->clock_models.Insert(key, true);
      rows->clock_models.String(batch.agent_id());
      rows->clock_models.String(batch.strings(clock.node()));
      rows->clock_models.Int64(clock.reference_ns());
      rows->clock_models.Int64(clock.offset_ns());
      rows->clock_models.Int64(clock.drift_ppb());
      rows->clock_models.Int64(clock.uncertainty_ns());
    }
  }

  // Imported totals.
  for (const v1::ImportedOpTotals& op : batch.op_totals()) {
    RowBinaryWriter& w = rows->op_totals;
    w.Int64(process[op.process()].job);
    w.Int64(process[op.process()].id);
    w.Int64(op_id(op.category(), op.name()));
    w.Int64(op.calls());
    w.Int64(op.bytes());
    w.Int64(op.dur_ns());
    w.ArraySize(op.sizes_size());
    for (const auto& s : op.sizes()) w.Int32(s.log2());
    w.ArraySize(op.sizes_size());
    for (const auto& s : op.sizes()) w.Int64(s.calls());
    w.ArraySize(op.sizes_size());
    for (const auto& s : op.sizes()) w.Int64(s.bytes());
    w.ArraySize(op.sizes_size());
    for (const auto& s : op.sizes()) w.Int64(s.dur_ns());
    origin(&w);
    w.Int64(now);
  }
  for (const v1::ImportedProcessTotals& p : batch.process_totals()) {
    RowBinaryWriter& w = rows->process_totals;
    w.Int64(process[p.process()].job);
    w.Int64(process[p.process()].id);
    w.Int64(p.comm_ns());
    w.Int64(p.elapsed_ns());
    w.String(batch.strings(p.source()));
    w.UInt8(static_cast<uint8_t>(
        (p.has_user_ns() ? 1 : 0) | (p.has_system_ns() ? 2 : 0) |
        (p.has_max_rss_bytes() ? 4 : 0) | (p.has_context_switches() ? 8 : 0)));
    w.Int64(p.user_ns());
    w.Int64(p.system_ns());
    w.Int64(p.max_rss_bytes());
    w.Int64(p.context_switches());
    origin(&w);
    w.Int64(now);
  }

  // Spans, less what the rings stored before; then the rings' new marks.
  std::vector<uint64_t> stored_below;
  for (const v1::RingRange& range : batch.rings()) {
    auto it = rows->marks.find(
        {static_cast<int64_t>(range.incarnation()), range.ring()});
    stored_below.push_back(
        it == rows->marks.end() ? 0 : static_cast<uint64_t>(it->second));
  }
  auto by_track =
      CollectTrackSpans(batch, decoded, stored_below, &caches_->wire);
  if (!by_track.ok()) return by_track.status();
  for (const v1::RingRange& range : batch.rings()) {
    int64_t& mark =
        rows->marks[{static_cast<int64_t>(range.incarnation()), range.ring()}];
    mark = std::max(mark, static_cast<int64_t>(range.end()));
    rows->ring_marks.Int64(static_cast<int64_t>(range.incarnation()));
    rows->ring_marks.Int32(range.ring());
    rows->ring_marks.Int64(static_cast<int64_t>(range.end()));
    origin(&rows->ring_marks);
  }

  int64_t stored = 0;
  for (int t = 0; t < batch.tracks_size(); ++t) {
    SpanColumns& spans = (*by_track)[t];
    if (spans.size() == 0) continue;
    stored += static_cast<int64_t>(spans.size());
    // The chunk's own dictionaries: operations by id, arg strings by text.
    std::vector<int64_t> op_ids;
    std::vector<std::string> strings;
    absl::flat_hash_map<std::pair<uint32_t, uint32_t>, uint32_t> op_index;
    absl::flat_hash_map<int64_t, uint32_t> string_index;
    for (size_t i = 0; i < spans.size(); ++i) {
      const auto key = std::make_pair(spans.category[i], spans.name[i]);
      auto [it, added] = op_index.try_emplace(key, op_ids.size());
      if (added) op_ids.push_back(op_id(key.first, key.second));
      spans.name[i] = it->second;
      spans.category[i] = 0;
    }
    const auto local = [&](int64_t batch_string) {
      auto [it, added] = string_index.try_emplace(batch_string, strings.size());
      if (added) strings.push_back(batch.strings(batch_string));
      return it->second;
    };
    for (ChunkArg& arg : spans.args) {
      arg.key = local(arg.key);
      if (arg.type == ChunkArg::Type::kString) arg.value = local(arg.value);
    }
    const int64_t job = process[batch.tracks(t).process()].job;
    absl::Status status =
        ForEachStoreChunk(spans, &caches_->piece,
                          [&](const SpanColumns& piece,
                              const StoreChunkBounds& bounds) -> absl::Status {
                            auto data = EncodeSpanChunk(piece);
                            if (!data.ok()) return data.status();
                            RowBinaryWriter& w = rows->chunks;
                            w.Int64(job);
                            w.Int64(track_id[t]);
                            w.Int64(bounds.first_start);
                            w.Int64(bounds.max_end);
                            w.Int64(bounds.max_dur);
                            w.Int64(bounds.count);
                            w.UInt8(bounds.has_step ? 1 : 0);
                            w.Int64(bounds.min_step);
                            w.Int64(bounds.max_step);
                            w.Int64(static_cast<int64_t>(data->size()));
                            origin(&w);
                            // A chunk's time is unique to it and
                            // orders it by arrival (its id in a scan).
                            w.Int32(rows->parts);
                            w.Int64(now + rows->parts++);
                            w.ArraySize(op_ids.size());
                            for (int64_t id : op_ids) w.Int64(id);
                            w.ArraySize(strings.size());
                            for (const std::string& s : strings) w.String(s);
                            w.String(*data);
                            return absl::OkStatus();
                          });
    if (!status.ok()) return status;
  }
  result->spans_stored = stored;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>>
ClickHouseStore::Deletions() {
  // Within a snapshot they are fixed: read once, not at every filter.
  if (deletions_) return *deletions_;
  std::vector<std::pair<int64_t, int64_t>> deleted;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT job, max(deleted_ns) FROM deleted_jobs WHERE "
                   "deleted_ns <= ",
                   snapshot_ns_, " GROUP BY job"),
      [&](RowBinaryReader& r) {
        int64_t job, at;
        if (!r.Int64(&job) || !r.Int64(&at)) return false;
        deleted.emplace_back(job, at);
        return true;
      });
  if (!read.ok()) return read;
  if (snapshot_ns_ != std::numeric_limits<int64_t>::max()) deletions_ = deleted;
  return deleted;
}

absl::StatusOr<std::string> ClickHouseStore::JobRowFilter(int64_t job_id,
                                                          bool committed) {
  auto deleted = Deletions();
  if (!deleted.ok()) return deleted.status();
  int64_t after = 0;  // written_ns > 0 always
  for (const auto& [job, at] : *deleted) {
    if (job == job_id) after = at;
  }
  std::string filter = absl::StrCat("job = ", job_id, " AND written_ns > ",
                                    after, " AND written_ns <= ", snapshot_ns_);
  if (committed) absl::StrAppend(&filter, " AND ", Committed(job_id));
  return filter;
}

std::string ClickHouseStore::Committed(int64_t job_id,
                                       std::optional<int64_t> after) const {
  return absl::StrCat(
      "(agent, seq, attempt) GLOBAL IN (SELECT agent, seq, min(attempt) FROM "
      "batches WHERE job = ",
      job_id, " AND written_ns <= ", snapshot_ns_, " GROUP BY agent, seq",
      after ? absl::StrCat(" HAVING argMin(written_ns, attempt) > ", *after)
            : std::string(),
      ")");
}

absl::StatusOr<std::vector<JobInfo>> ClickHouseStore::Jobs(
    std::optional<int64_t> only) {
  auto deleted = Deletions();
  if (!deleted.ok()) return deleted.status();
  std::vector<int64_t> deleted_jobs, deleted_at;
  for (const auto& [job, at] : *deleted) {
    deleted_jobs.push_back(job);
    deleted_at.push_back(at);
  }
  std::string alive = absl::StrCat("written_ns <= ", snapshot_ns_);
  if (!deleted_jobs.empty()) {
    absl::StrAppend(&alive, " AND written_ns > transform(job, ",
                    Int64Array(deleted_jobs), ", ", Int64Array(deleted_at),
                    ", toInt64(0))");
  }
  if (only) absl::StrAppend(&alive, " AND job = ", *only);
  const std::string committed = absl::StrCat(
      " AND (agent, seq, attempt) GLOBAL IN (SELECT agent, seq, min(attempt) "
      "FROM batches WHERE written_ns <= ",
      snapshot_ns_, only ? absl::StrCat(" AND job = ", *only) : "",
      " GROUP BY agent, seq)");

  std::map<int64_t, JobInfo> jobs;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT job, any(job_name), max(written_ns) FROM batches "
                   "WHERE job != 0 AND ",
                   alive, committed, " GROUP BY job"),
      [&](RowBinaryReader& r) {
        JobInfo job;
        absl::string_view name;
        if (!r.Int64(&job.id) || !r.String(&name) ||
            !r.Int64(&job.written_ns)) {
          return false;
        }
        job.name = std::string(name);
        job.min_start_ns = std::numeric_limits<int64_t>::max();
        job.max_end_ns = std::numeric_limits<int64_t>::min();
        jobs[job.id] = std::move(job);
        return true;
      });
  if (!read.ok()) return read;
  read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT job, min(first_start), max(max_end), max(max_dur), "
                   "max(max_end - first_start), sum(count), toInt64(count()), "
                   "sum(bytes) FROM chunks WHERE ",
                   alive, committed, " GROUP BY job"),
      [&](RowBinaryReader& r) {
        int64_t id;
        JobInfo scratch;
        if (!r.Int64(&id)) return false;
        auto it = jobs.find(id);
        JobInfo& job = it == jobs.end() ? scratch : it->second;
        if (!r.Int64(&job.min_start_ns) || !r.Int64(&job.max_end_ns) ||
            !r.Int64(&job.max_dur_ns) || !r.Int64(&job.max_chunk_ns) ||
            !r.Int64(&job.spans) || !r.Int64(&job.chunks) ||
            !r.Int64(&job.bytes)) {
          return false;
        }
        return true;
      });
  if (!read.ok()) return read;
  read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT job, toInt64(uniqExactIf(r, r >= 0)), "
                   "toInt64(uniqExact(n)), max(ws), toInt64(sum(d)) FROM "
                   "(SELECT job, id, any(rank) AS r, any(node) AS n, "
                   "max(world_size) AS ws, max(dropped) AS d FROM processes "
                   "WHERE ",
                   alive, " GROUP BY job, id) GROUP BY job"),
      [&](RowBinaryReader& r) {
        int64_t id, ranks, nodes, dropped;
        int32_t world_size;
        if (!r.Int64(&id) || !r.Int64(&ranks) || !r.Int64(&nodes) ||
            !r.Int32(&world_size) || !r.Int64(&dropped)) {
          return false;
        }
        auto it = jobs.find(id);
        if (it != jobs.end()) {
          it->second.ranks = static_cast<int32_t>(ranks);
          it->second.nodes = static_cast<int32_t>(nodes);
          it->second.world_size = world_size;
          it->second.spans_dropped = dropped;
        }
        return true;
      });
  if (!read.ok()) return read;
  std::vector<JobInfo> out;
  for (auto& [id, job] : jobs) {
    // Times are stored absolute: the epoch is the first span's start.
    job.epoch_ns = job.spans > 0 ? job.min_start_ns : 0;
    out.push_back(std::move(job));
  }
  std::sort(out.begin(), out.end(),
            [](const JobInfo& a, const JobInfo& b) { return a.name < b.name; });
  return out;
}

absl::StatusOr<std::vector<JobInfo>> ClickHouseStore::ListJobs() {
  return Jobs(std::nullopt);
}

absl::StatusOr<int64_t> ClickHouseStore::DeleteJob(const std::string& name) {
  const int64_t id = JobId(name);
  auto jobs = Jobs(id);
  if (!jobs.ok()) return jobs.status();
  if (jobs->empty()) {
    return absl::NotFoundError(
        absl::StrCat("no job \"", name, "\" in ", named_));
  }
  const int64_t now = Now();
  deletions_.reset();
  RowBinaryWriter tombstone;
  tombstone.Int64(id);
  tombstone.Int64(now);
  absl::Status status =
      client_->InsertRowBinary("deleted_jobs", tombstone.bytes());
  if (!status.ok()) return status;
  // Reads skip the rows from now on; the server reclaims them in the
  // background (a mutation). A failure here loses nothing but disk space.
  for (const char* table : kJobTables) {
    client_
        ->Execute(absl::StrCat("ALTER TABLE ", table, " DELETE WHERE job = ",
                               id, " AND written_ns <= ", now))
        .IgnoreError();
  }
  return (*jobs)[0].spans;
}

absl::StatusOr<std::vector<std::string>> ClickHouseStore::DeleteJobsEndedBefore(
    int64_t end_before_ns) {
  auto jobs = ListJobs();
  if (!jobs.ok()) return jobs.status();
  std::vector<std::string> deleted;
  for (const JobInfo& job : *jobs) {
    const bool old = job.spans > 0 ? job.max_end_ns < end_before_ns
                                   : job.written_ns < end_before_ns;
    if (!old) continue;
    auto spans = DeleteJob(job.name);
    if (!spans.ok()) return spans.status();
    deleted.push_back(job.name);
  }
  return deleted;
}

absl::Status ClickHouseStore::LookupStrings(
    const std::string& ids_subquery,
    std::vector<std::pair<int64_t, std::string>>* out) {
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT id, any(s) FROM strings WHERE id GLOBAL IN (",
                   ids_subquery, ") GROUP BY id"),
      [&](RowBinaryReader& r) {
        int64_t id;
        absl::string_view s;
        if (!r.Int64(&id) || !r.String(&s)) return false;
        out->emplace_back(id, std::string(s));
        return true;
      });
  return read;
}

absl::StatusOr<JobCatalog> ClickHouseStore::LoadCatalog(
    const std::string& job_name) {
  const int64_t job_id = JobId(job_name);
  auto jobs = Jobs(job_id);
  if (!jobs.ok()) return jobs.status();
  if (jobs->empty()) {
    // The message names no other job: the asker may not be allowed to know
    // of them (docs/security.md).
    return absl::NotFoundError(
        absl::StrCat("no job \"", job_name, "\" in ", named_,
                     " (`meridian jobs` lists the stored jobs)"));
  }
  JobCatalog catalog;
  catalog.job = std::move((*jobs)[0]);
  auto filter = JobRowFilter(job_id, false);
  if (!filter.ok()) return filter.status();

  std::vector<std::pair<int64_t, std::string>> names;
  absl::Status looked =
      LookupStrings(absl::StrCat("SELECT node FROM processes WHERE ", *filter,
                                 " UNION ALL SELECT name FROM tracks WHERE ",
                                 *filter, " UNION ALL SELECT name FROM ops"),
                    &names);
  if (!looked.ok()) return looked;
  absl::flat_hash_map<int64_t, std::string> text(names.begin(), names.end());
  const auto name_of = [&](int64_t id) {
    auto it = text.find(id);
    return it == text.end() ? std::string() : it->second;
  };

  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat(
          "SELECT id, any(node), any(rank), any(local_rank), any(pid), "
          "max(dropped) FROM processes WHERE ",
          *filter, " GROUP BY id"),
      [&](RowBinaryReader& r) {
        ProcessInfo p;
        int64_t node;
        if (!r.Int64(&p.id) || !r.Int64(&node) || !r.Int32(&p.rank) ||
            !r.Int32(&p.local_rank) || !r.Int64(&p.pid) ||
            !r.Int64(&p.dropped)) {
          return false;
        }
        p.node = name_of(node);
        catalog.processes.push_back(std::move(p));
        return true;
      });
  if (!read.ok()) return read;
  std::sort(catalog.processes.begin(), catalog.processes.end(),
            [](const ProcessInfo& a, const ProcessInfo& b) {
              return std::tie(a.rank, a.id) < std::tie(b.rank, b.id);
            });

  read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT id, any(process), any(kind), any(ext_id), "
                   "argMin(name, written_ns) FROM tracks WHERE ",
                   *filter, " GROUP BY id"),
      [&](RowBinaryReader& r) {
        TrackInfo t;
        int32_t kind;
        int64_t name;
        if (!r.Int64(&t.id) || !r.Int64(&t.process_id) || !r.Int32(&kind) ||
            !r.Int64(&t.ext_id) || !r.Int64(&name)) {
          return false;
        }
        t.kind = static_cast<v1::TrackKind>(kind);
        t.name = name_of(name);
        catalog.tracks.push_back(std::move(t));
        return true;
      });
  if (!read.ok()) return read;
  std::sort(catalog.tracks.begin(), catalog.tracks.end(),
            [](const TrackInfo& a, const TrackInfo& b) {
              return std::make_tuple(a.process_id, static_cast<int>(a.kind),
                                     a.ext_id) <
                     std::make_tuple(b.process_id, static_cast<int>(b.kind),
                                     b.ext_id);
            });

  read = ReadRows(
      client_.get(),
      "SELECT id, any(category), any(name) FROM ops GROUP BY id "
      "ORDER BY id",
      [&](RowBinaryReader& r) {
        OpInfo op;
        int32_t category;
        int64_t name;
        if (!r.Int64(&op.id) || !r.Int32(&category) || !r.Int64(&name)) {
          return false;
        }
        op.category = static_cast<v1::Category>(category);
        op.name = name_of(name);
        catalog.ops.push_back(std::move(op));
        return true;
      });
  if (!read.ok()) return read;
  return catalog;
}

absl::Status ClickHouseStore::Scan(
    const JobInfo& job, const ScanRange& range,
    const std::function<bool(const StoredSpan&)>& visit, ScanStats* stats) {
  // The range is relative to the job's first span; stored times absolute.
  // A span ending at or after `from` is in a chunk starting no earlier than
  // from - max_chunk.
  int64_t lo = std::numeric_limits<int64_t>::min();
  int64_t hi = std::numeric_limits<int64_t>::max();
  int64_t end_lo = std::numeric_limits<int64_t>::min();
  if (range.from_ns) {
    end_lo = job.min_start_ns + *range.from_ns;
    lo = end_lo - job.max_chunk_ns;
  }
  if (range.to_ns) hi = job.min_start_ns + *range.to_ns;
  // The chunk's own columns first (PREWHERE: the data column is read only
  // for the rows they pass), then whether its write was committed.
  auto filter = JobRowFilter(job.id, false);
  if (!filter.ok()) return filter.status();
  std::string prewhere = *filter;
  if (range.from_ns) {
    absl::StrAppend(&prewhere, " AND first_start >= ", lo,
                    " AND max_end >= ", end_lo);
  }
  if (range.to_ns) absl::StrAppend(&prewhere, " AND first_start < ", hi);
  if (range.first_step || range.last_step) {
    absl::StrAppend(&prewhere, " AND has_step = 1");
    if (range.first_step) {
      absl::StrAppend(&prewhere, " AND max_step >= ", *range.first_step);
    }
    if (range.last_step) {
      absl::StrAppend(&prewhere, " AND min_step <= ", *range.last_step);
    }
  }
  if (range.tracks) {
    std::vector<int64_t> tracks(range.tracks->begin(), range.tracks->end());
    std::sort(tracks.begin(), tracks.end());
    if (tracks.empty()) return absl::OkStatus();
    absl::StrAppend(&prewhere, " AND track IN (", absl::StrJoin(tracks, ","),
                    ")");
  }
  std::string sql = absl::StrCat(
      "SELECT written_ns AS id, track, first_start, op_ids, strings, data "
      "FROM chunks PREWHERE ",
      prewhere, " WHERE ", Committed(job.id, range.written_after));
  absl::StrAppend(&sql, " ORDER BY first_start, id FORMAT RowBinary");
  auto rows = client_->Stream(sql);
  if (!rows.ok()) return rows.status();
  ClickHouseRows* stream = rows->get();
  ChunkRowSource source({[stream](size_t n) { return stream->Fill(n); },
                         [stream](size_t n) { stream->Consume(n); },
                         [stream] { return stream->ended(); }});
  return MergeChunks(&source, range, end_lo, hi, visit, stats);
}

absl::StatusOr<std::vector<NodeClockModel>> ClickHouseStore::LoadClockModels(
    const std::string& node, int64_t job_id) {
  auto filter = JobRowFilter(job_id, false);
  if (!filter.ok()) return filter.status();
  // The agents that delivered the job's batches; a job without any (only
  // the SQLite store has such, from before version 4) uses every model.
  int64_t agents = 0;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT toInt64(uniqExact(agent)) FROM batches WHERE ",
                   *filter),
      [&](RowBinaryReader& r) { return r.Int64(&agents); });
  if (!read.ok()) return read;
  std::vector<NodeClockModel> models;
  read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT reference_ns, any(offset_ns), any(drift_ppb), "
                   "any(uncertainty_ns) FROM clock_models WHERE node = ",
                   Quote(node),
                   agents == 0 ? std::string()
                               : absl::StrCat(" AND agent GLOBAL IN (SELECT "
                                              "agent FROM batches WHERE ",
                                              *filter, ")"),
                   " GROUP BY agent, reference_ns ORDER BY reference_ns, "
                   "agent"),
      [&](RowBinaryReader& r) {
        NodeClockModel m;
        if (!r.Int64(&m.reference_ns) || !r.Int64(&m.offset_ns) ||
            !r.Int64(&m.drift_ppb) || !r.Int64(&m.uncertainty_ns)) {
          return false;
        }
        models.push_back(m);
        return true;
      });
  if (!read.ok()) return read;
  return models;
}

absl::StatusOr<std::optional<std::pair<int64_t, int64_t>>>
ClickHouseStore::StepRange(int64_t job_id) {
  auto filter = JobRowFilter(job_id, true);
  if (!filter.ok()) return filter.status();
  std::optional<std::pair<int64_t, int64_t>> range;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT min(min_step), max(max_step), toInt64(count()) "
                   "FROM chunks WHERE has_step = 1 AND ",
                   *filter),
      [&](RowBinaryReader& r) {
        int64_t lo, hi, count;
        if (!r.Int64(&lo) || !r.Int64(&hi) || !r.Int64(&count)) return false;
        if (count > 0) range = std::make_pair(lo, hi);
        return true;
      });
  if (!read.ok()) return read;
  return range;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>>
ClickHouseStore::TrackLastSteps(int64_t job_id) {
  auto filter = JobRowFilter(job_id, true);
  if (!filter.ok()) return filter.status();
  std::vector<std::pair<int64_t, int64_t>> tracks;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT track, max(max_step) FROM chunks WHERE has_step = "
                   "1 AND ",
                   *filter, " GROUP BY track ORDER BY track"),
      [&](RowBinaryReader& r) {
        int64_t track, last;
        if (!r.Int64(&track) || !r.Int64(&last)) return false;
        tracks.emplace_back(track, last);
        return true;
      });
  if (!read.ok()) return read;
  return tracks;
}

absl::StatusOr<int64_t> ClickHouseStore::WriteMark(int64_t job_id) {
  // The latest commit less the margin: a commit's time is taken before its
  // row is inserted, so a write stamped just before the latest (by another
  // collector, or a clock slightly behind) can become visible after it.
  auto filter = JobRowFilter(job_id, false);
  if (!filter.ok()) return filter.status();
  int64_t mark = 0;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT toInt64(max(written_ns)) FROM batches WHERE ",
                   *filter),
      [&](RowBinaryReader& r) { return r.Int64(&mark); });
  if (!read.ok()) return read;
  return mark > 0 ? mark - write_mark_margin_ns_ : 0;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>>
ClickHouseStore::StepsWrittenAfter(int64_t job_id, int64_t mark,
                                   int64_t up_to) {
  auto filter = JobRowFilter(job_id, false);
  if (!filter.ok()) return filter.status();
  // Chunks of the committed attempts whose commit came after `mark`.
  const std::string late = Committed(job_id, mark);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT DISTINCT min_step, max_step FROM chunks WHERE "
                   "has_step = 1 AND min_step <= ",
                   up_to, " AND ", *filter, " AND ", late,
                   " ORDER BY min_step, max_step"),
      [&](RowBinaryReader& r) {
        int64_t lo, hi;
        if (!r.Int64(&lo) || !r.Int64(&hi)) return false;
        ranges.emplace_back(lo, hi);
        return true;
      });
  if (!read.ok()) return read;
  return ranges;
}

absl::StatusOr<JobTotals> ClickHouseStore::LoadTotals(int64_t job_id) {
  auto filter = JobRowFilter(job_id, true);
  if (!filter.ok()) return filter.status();
  JobTotals totals;
  // Later rows of a process (and operation) replace earlier ones.
  absl::Status read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT process, op, calls, bytes, dur_ns, size_log2, "
                   "size_calls, size_bytes, size_dur_ns FROM op_totals WHERE ",
                   *filter, " ORDER BY process, op, written_ns, seq"),
      [&](RowBinaryReader& r) {
        StoredOpTotals op;
        if (!r.Int64(&op.process_id) || !r.Int64(&op.op_id) ||
            !r.Int64(&op.calls) || !r.Int64(&op.bytes) ||
            !r.Int64(&op.dur_ns)) {
          return false;
        }
        uint64_t n[4];
        std::vector<StoredOpTotals::Size> sizes;
        for (int column = 0; column < 4; ++column) {
          if (!r.ArraySize(&n[column]) || (column > 0 && n[column] != n[0])) {
            return false;
          }
          sizes.resize(n[0]);
          for (uint64_t i = 0; i < n[column]; ++i) {
            StoredOpTotals::Size& s = sizes[i];
            const bool ok = column == 0   ? r.Int32(&s.log2)
                            : column == 1 ? r.Int64(&s.calls)
                            : column == 2 ? r.Int64(&s.bytes)
                                          : r.Int64(&s.dur_ns);
            if (!ok) return false;
          }
        }
        std::sort(sizes.begin(), sizes.end(),
                  [](const auto& a, const auto& b) { return a.log2 < b.log2; });
        op.sizes = std::move(sizes);
        if (!totals.ops.empty() &&
            totals.ops.back().process_id == op.process_id &&
            totals.ops.back().op_id == op.op_id) {
          totals.ops.back() = std::move(op);
        } else {
          totals.ops.push_back(std::move(op));
        }
        return true;
      });
  if (!read.ok()) return read;
  read = ReadRows(
      client_.get(),
      absl::StrCat("SELECT process, comm_ns, elapsed_ns, source, present, "
                   "user_ns, system_ns, max_rss_bytes, context_switches FROM "
                   "process_totals WHERE ",
                   *filter, " ORDER BY process, written_ns, seq"),
      [&](RowBinaryReader& r) {
        StoredProcessTotals p;
        absl::string_view source;
        uint8_t present;
        int64_t values[4];
        if (!r.Int64(&p.process_id) || !r.Int64(&p.comm_ns) ||
            !r.Int64(&p.elapsed_ns) || !r.String(&source) ||
            !r.UInt8(&present)) {
          return false;
        }
        for (int64_t& v : values) {
          if (!r.Int64(&v)) return false;
        }
        p.source = std::string(source);
        std::optional<int64_t>* fields[] = {
            &p.user_ns, &p.system_ns, &p.max_rss_bytes, &p.context_switches};
        for (int i = 0; i < 4; ++i) {
          if (present & (1 << i)) *fields[i] = values[i];
        }
        if (!totals.processes.empty() &&
            totals.processes.back().process_id == p.process_id) {
          totals.processes.back() = std::move(p);
        } else {
          totals.processes.push_back(std::move(p));
        }
        return true;
      });
  if (!read.ok()) return read;
  return totals;
}

absl::StatusOr<int64_t> ClickHouseStore::FileBytes() {
  int64_t bytes = 0;
  absl::Status read = ReadRows(
      client_.get(),
      "SELECT toInt64(sum(bytes_on_disk)) FROM system.parts WHERE database = "
      "currentDatabase() AND active",
      [&](RowBinaryReader& r) { return r.Int64(&bytes); });
  if (!read.ok()) return read;
  return bytes;
}

// The latest row of `table` (clock_solutions or summary_states) written
// after the job's last deletion and up to the snapshot.
absl::StatusOr<std::optional<StoredJobResult>> ClickHouseStore::LoadResult(
    const char* table, const char* time_column, int64_t job_id) {
  std::optional<StoredJobResult> result;
  if (!HasTable(table)) return result;
  auto filter = JobRowFilter(job_id, false);
  if (!filter.ok()) return filter.status();
  absl::Status read =
      ReadRows(client_.get(),
               absl::StrCat("SELECT spans, job_written_ns, models, ",
                            time_column, ", data FROM ", table, " WHERE ",
                            *filter, " ORDER BY written_ns DESC LIMIT 1"),
               [&](RowBinaryReader& r) {
                 StoredJobResult s;
                 absl::string_view data;
                 if (!r.Int64(&s.spans) || !r.Int64(&s.written_ns) ||
                     !r.Int64(&s.models) || !r.Int64(&s.computed_ns) ||
                     !r.String(&data)) {
                   return false;
                 }
                 s.data = std::string(data);
                 result = std::move(s);
                 return true;
               });
  if (!read.ok()) return read;
  return result;
}

absl::Status ClickHouseStore::SaveResult(const char* table, int64_t job_id,
                                         const StoredJobResult& result) {
  if (read_only_) {
    return absl::FailedPreconditionError(
        absl::StrCat(named_, " is open read-only"));
  }
  RowBinaryWriter row;
  row.Int64(job_id);
  row.Int64(result.spans);
  row.Int64(result.written_ns);
  row.Int64(result.models);
  row.Int64(result.computed_ns);
  row.Int64(Now());
  row.String(result.data);
  return client_->InsertRowBinary(table, row.bytes());
}

absl::StatusOr<std::optional<StoredJobResult>>
ClickHouseStore::LoadClockSolution(int64_t job_id) {
  return LoadResult("clock_solutions", "solved_ns", job_id);
}

absl::Status ClickHouseStore::SaveClockSolution(
    int64_t job_id, const StoredJobResult& solution) {
  return SaveResult("clock_solutions", job_id, solution);
}

absl::StatusOr<std::optional<StoredJobResult>>
ClickHouseStore::LoadSummaryState(int64_t job_id) {
  return LoadResult("summary_states", "computed_ns", job_id);
}

// The summaries first, then the state that names them, in a later
// written_ns: a reader whose snapshot holds the state holds the summaries.
absl::Status ClickHouseStore::SaveStepSummaries(
    int64_t job_id, const std::vector<StoredStepSummary>& steps,
    const StoredJobResult& state) {
  if (read_only_) {
    return absl::FailedPreconditionError(
        absl::StrCat(named_, " is open read-only"));
  }
  if (!steps.empty()) {
    const int64_t now = Now();
    RowBinaryWriter rows;
    for (const StoredStepSummary& step : steps) {
      rows.Int64(job_id);
      rows.Int64(step.step);
      rows.Int64(now);
      rows.String(step.data);
    }
    absl::Status inserted =
        client_->InsertRowBinary("step_summaries", rows.bytes());
    if (!inserted.ok()) return inserted;
  }
  return SaveResult("summary_states", job_id, state);
}

// Read a page of steps at a time (the latest row of each), so memory holds
// one page however many steps the job has.
absl::Status ClickHouseStore::ScanStepSummaries(
    int64_t job_id, int64_t first_step,
    const std::function<bool(const StoredStepSummary&)>& visit) {
  if (!HasTable("step_summaries")) return absl::OkStatus();
  auto filter = JobRowFilter(job_id, false);
  if (!filter.ok()) return filter.status();
  constexpr int kPage = 4096;
  int64_t from = first_step;
  for (;;) {
    int rows = 0;
    bool more = true;
    StoredStepSummary row;
    absl::Status read = ReadRows(
        client_.get(),
        absl::StrCat("SELECT step, data FROM step_summaries WHERE ", *filter,
                     " AND step >= ", from,
                     " ORDER BY step, written_ns DESC LIMIT 1 BY step LIMIT ",
                     kPage),
        [&](RowBinaryReader& r) {
          absl::string_view data;
          if (!r.Int64(&row.step) || !r.String(&data)) return false;
          ++rows;
          if (!more) return true;
          row.data.assign(data.data(), data.size());
          more = visit(row);
          return true;
        });
    if (!read.ok()) return read;
    if (!more || rows < kPage) return absl::OkStatus();
    from = row.step + 1;
  }
}

}  // namespace meridian
