// ingest_bench: Meridian's ingest path measured against SQLite's own speed
// on the same rows, in one run (the machines are shared and noisy: the ratio
// is the figure to compare). See docs/PERFORMANCE.md.
//
//   e2e:    synthetic agents -> gRPC over loopback -> collector -> committed
//           (every batch acknowledged), one concurrent stream per node; the
//           batches carry span chunks, encoded before the clock starts
//   sqlite: the same span rows, ids already resolved, inserted with one
//           prepared statement into the row-per-span table of store schema
//           2 with the same synchronous setting, in transactions as large
//           as the collector's largest group: the ceiling of that design
//   size:   store file bytes per span, indexes included, after a checkpoint
//   export: the whole job as a Chrome trace over the Query RPC
// With --store clickhouse, e2e and size are measured for both stores in
// the same run, alternating SQLite and ClickHouse (a clickhouse-server
// started for the run, as the tests start one) over --rounds rounds
// (default 3; medians): spans/s and bytes a span on disk of each.
// The last line printed is one JSON object with the figures.
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "collector/collector.h"
#include "common/command_line.h"
#include "meridian/v1/query.grpc.pb.h"
#include "store/store.h"
#include "testing/synthetic_job.h"
#include "testing/test_store.h"
#include "wire/batch_builder.h"
#include "wire/ingest_client.h"

namespace meridian {
namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

void RemoveStore(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((path + suffix).c_str());
  }
}

void Check(bool ok, const std::string& what) {
  if (!ok) {
    fprintf(stderr, "ingest_bench: %s\n", what.c_str());
    exit(1);
  }
}

// Bare SQLite: the rows the collector would write, ids and k resolved
// before the clock starts.
double SqliteSpansPerSecond(const std::vector<std::vector<v1::Batch>>& nodes,
                            const std::string& path, int64_t spans) {
  struct Row {
    int64_t start, track, k, op, dur, bytes, comm, comm_size;
    const v1::Span* span;
  };
  std::vector<Row> rows;
  rows.reserve(spans);
  const int64_t epoch = nodes[0][0].spans(0).start_ns();
  std::map<std::pair<int64_t, int64_t>, int64_t> ties;  // (start, track)
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (const v1::Batch& batch : nodes[n]) {
      for (const v1::Span& span : batch.spans()) {
        const v1::Track& track = batch.tracks(span.track());
        int64_t track_id =
            n * 1000000 + batch.processes(track.process()).rank() * 10 + 1;
        int64_t start = span.start_ns() - epoch;
        int64_t k = ties[{start, track_id}]++;
        rows.push_back({start, track_id, k, span.category() * 1000 + 1,
                        span.dur_ns(), span.bytes(),
                        static_cast<int64_t>(span.comm()), span.comm_size(),
                        &span});
      }
    }
  }
  ties.clear();

  RemoveStore(path);
  sqlite3* db;
  Check(sqlite3_open(path.c_str(), &db) == SQLITE_OK, "open");
  // The row-per-span table of store schema 2: the ceiling of that design.
  sqlite3_exec(db,
               "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
               "CREATE TABLE spans(job INTEGER NOT NULL, start INTEGER NOT "
               "NULL, track INTEGER NOT NULL, k INTEGER NOT NULL, op INTEGER "
               "NOT NULL, dur INTEGER NOT NULL, bytes INTEGER NOT NULL, peer "
               "INTEGER, tag INTEGER, comm INTEGER NOT NULL, comm_size INTEGER "
               "NOT NULL, seq INTEGER, step INTEGER, partition INTEGER, corr "
               "INTEGER NOT NULL, kind INTEGER NOT NULL, value REAL, args "
               "BLOB, PRIMARY KEY(job, start, track, k)) WITHOUT ROWID;",
               nullptr, nullptr, nullptr);
  sqlite3_stmt* insert;
  int rc = sqlite3_prepare_v2(
      db,
      "INSERT INTO spans(job, start, track, k, op, dur, bytes, peer, tag, "
      "comm, comm_size, seq, step, partition, corr, kind, value, args) "
      "VALUES(1, ?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, ?8, ?9, ?10, ?11, NULL, "
      "0, 0, NULL, NULL)",
      -1, &insert, nullptr);
  Check(rc == SQLITE_OK, sqlite3_errmsg(db));
  auto optional = [insert](int i, bool has, int64_t v) {
    if (has) {
      sqlite3_bind_int64(insert, i, v);
    } else {
      sqlite3_bind_null(insert, i);
    }
  };
  auto start = std::chrono::steady_clock::now();
  int64_t in_transaction = 0;
  sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
  for (const Row& row : rows) {
    sqlite3_bind_int64(insert, 1, row.start);
    sqlite3_bind_int64(insert, 2, row.track);
    sqlite3_bind_int64(insert, 3, row.k);
    sqlite3_bind_int64(insert, 4, row.op);
    sqlite3_bind_int64(insert, 5, row.dur);
    sqlite3_bind_int64(insert, 6, row.bytes);
    optional(7, row.span->has_peer(), row.span->peer());
    sqlite3_bind_int64(insert, 8, row.comm);
    sqlite3_bind_int64(insert, 9, row.comm_size);
    optional(10, row.span->has_seq(), row.span->seq());
    optional(11, row.span->has_step(), row.span->step());
    if (sqlite3_step(insert) != SQLITE_DONE) Check(false, sqlite3_errmsg(db));
    sqlite3_reset(insert);
    if (++in_transaction == 200000) {  // BatchWriter's largest group
      sqlite3_exec(db, "COMMIT; BEGIN", nullptr, nullptr, nullptr);
      in_transaction = 0;
    }
  }
  sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
  double seconds = Seconds(start);
  sqlite3_finalize(insert);
  sqlite3_close(db);
  return spans / seconds;
}

// Sends every node's batches at once, one stream per node, until every one
// is acknowledged as stored; spans per second.
double Ingest(Collector& collector,
              const std::vector<std::vector<v1::Batch>>& wire, int64_t spans) {
  auto start = std::chrono::steady_clock::now();
  auto reports = SendConcurrently(
      [&] {
        return grpc::CreateChannel(collector.address(),
                                   grpc::InsecureChannelCredentials());
      },
      wire);
  const double seconds = Seconds(start);
  int64_t stored_spans = 0;
  for (size_t node = 0; node < wire.size(); ++node) {
    Check(reports[node].ok() &&
              reports[node]->stored == int64_t(wire[node].size()),
          "an agent's batches were not all stored");
    stored_spans += reports[node]->spans_stored;
  }
  // Every span acknowledged as stored: a rate of spans lost would be no rate.
  Check(stored_spans == spans,
        "the collector acknowledged " + std::to_string(stored_spans) +
            " spans stored, not " + std::to_string(spans));
  return spans / seconds;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// --store clickhouse: SQLite and ClickHouse stores behind the collector,
// alternated over `rounds` rounds, each into a new store.
int BothStores(const std::vector<std::vector<v1::Batch>>& wire, int64_t spans,
               const std::string& dir, int64_t rounds, double sqlite_rate) {
  std::vector<double> rate[2], size[2];
  for (int64_t round = 0; round < rounds; ++round) {
    for (int kind = 0; kind < 2; ++kind) {
      std::string location = dir + "/meridian-bench-e2e.db";
      RemoveStore(location);
      if (kind == 1) {
        auto made = NewStoreLocation(StoreKind::kClickHouse, "ingest_bench");
        Check(made.ok(), std::string(made.status().message()));
        location = *made;
      }
      CollectorOptions options;
      options.listen = "127.0.0.1:0";
      options.db_path = location;
      auto collector = Collector::Start(options);
      Check(collector.ok(), std::string(collector.status().message()));
      rate[kind].push_back(Ingest(**collector, wire, spans));
      (*collector)->Shutdown();
      collector->reset();
      if (kind == 0) {
        sqlite3* handle;
        sqlite3_open(location.c_str(), &handle);
        sqlite3_exec(handle, "PRAGMA wal_checkpoint(TRUNCATE);", nullptr,
                     nullptr, nullptr);
        sqlite3_close(handle);
      }
      auto store = Store::Open(location);
      Check(store.ok(), "reopen");
      auto bytes = (*store)->FileBytes();
      Check(bytes.ok(), "store size");
      size[kind].push_back(double(*bytes) / spans);
      printf("round %lld %s: %.0f spans/s, %.1f bytes a span on disk\n",
             static_cast<long long>(round), kind == 0 ? "sqlite" : "clickhouse",
             rate[kind].back(), size[kind].back());
      if (kind == 0) RemoveStore(location);
    }
  }
  printf(
      "{\"spans\":%lld,\"rounds\":%lld,\"sqlite_store_spans_per_s\":%.0f,"
      "\"clickhouse_spans_per_s\":%.0f,\"clickhouse_over_sqlite\":%.3f,"
      "\"sqlite_store_bytes_per_span\":%.2f,"
      "\"clickhouse_bytes_per_span\":%.2f,\"bare_sqlite_spans_per_s\":%.0f}\n",
      static_cast<long long>(spans), static_cast<long long>(rounds),
      Median(rate[0]), Median(rate[1]), Median(rate[1]) / Median(rate[0]),
      Median(size[0]), Median(size[1]), sqlite_rate);
  RemoveStore(dir + "/meridian-bench-sqlite.db");
  return 0;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  auto line = CommandLine::Parse(
      args, 1, {"spans", "dir", "store", "rounds", "jitter-ns"}, {});
  Check(line.ok(), std::string(line.status().message()));
  auto wanted = line->GetInt("spans", 1000000);
  Check(wanted.ok(), std::string(wanted.status().message()));
  const std::string dir = line->Get("dir", "/tmp");

  SyntheticJob job;
  job.job = "bench";
  job.ranks = 16;
  job.nodes = 4;
  job.steps = static_cast<int>(*wanted / (job.ranks * kSyntheticSpansPerStep));
  auto jitter = line->GetInt("jitter-ns", 0);
  Check(jitter.ok() && *jitter >= 0, "--jitter-ns must be 0 or more");
  job.jitter_ns = *jitter;
  std::vector<std::vector<v1::Batch>> nodes;
  int64_t spans = 0, batches = 0;
  for (int node = 0; node < job.nodes; ++node) {
    nodes.push_back(SyntheticBatches(job, node));
    for (const v1::Batch& b : nodes.back()) spans += b.spans_size();
    batches += nodes.back().size();
  }
  printf(
      "%lld spans in %lld batches of up to %d, %d ranks on %d nodes, times "
      "jittered by up to %lld ns\n",
      static_cast<long long>(spans), static_cast<long long>(batches),
      job.spans_per_batch, job.ranks, job.nodes,
      static_cast<long long>(job.jitter_ns));

  const double sqlite_rate =
      SqliteSpansPerSecond(nodes, dir + "/meridian-bench-sqlite.db", spans);
  printf("sqlite: %.0f spans/s\n", sqlite_rate);

  // Agents send chunks: the batches are encoded before the clock starts
  // (the agent's encoding is measured by ./bench/run.sh colocated).
  std::vector<std::vector<v1::Batch>> wire(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (const v1::Batch& b : nodes[n]) wire[n].push_back(ToChunks(b));
  }
  const std::string store_kind = line->Get("store", "sqlite");
  Check(store_kind == "sqlite" || store_kind == "clickhouse",
        "--store is sqlite or clickhouse");
  if (store_kind == "clickhouse") {
    auto rounds = line->GetInt("rounds", 3);
    Check(rounds.ok() && *rounds >= 1, "--rounds must be 1 or more");
    return BothStores(wire, spans, dir, *rounds, sqlite_rate);
  }
  const std::string db = dir + "/meridian-bench-e2e.db";
  RemoveStore(db);
  CollectorOptions options;
  options.listen = "127.0.0.1:0";
  options.db_path = db;
  auto collector = Collector::Start(options);
  Check(collector.ok(), std::string(collector.status().message()));
  const double e2e_rate = Ingest(**collector, wire, spans);
  printf("e2e: %.0f spans/s\n", e2e_rate);

  auto query = v1::Query::NewStub(grpc::CreateChannel(
      (*collector)->address(), grpc::InsecureChannelCredentials()));
  auto start = std::chrono::steady_clock::now();
  int64_t export_bytes = 0;
  {
    grpc::ClientContext context;
    v1::ExportRequest request;
    request.mutable_filter()->set_job("bench");
    auto reader = query->ExportTrace(&context, request);
    v1::TraceChunk chunk;
    while (reader->Read(&chunk)) export_bytes += chunk.data().size();
    Check(reader->Finish().ok(), "export failed");
  }
  const double export_rate = spans / Seconds(start);
  printf("export: %.0f spans/s, %.1f JSON bytes per span\n", export_rate,
         double(export_bytes) / spans);
  query.reset();
  (*collector)->Shutdown();
  collector->reset();

  sqlite3* handle;
  sqlite3_open(db.c_str(), &handle);
  sqlite3_exec(handle, "PRAGMA wal_checkpoint(TRUNCATE);", nullptr, nullptr,
               nullptr);
  sqlite3_close(handle);
  auto store = Store::Open(db);
  Check(store.ok(), "reopen");
  const double bytes_per_span = double(*(*store)->FileBytes()) / spans;
  printf("store: %.1f bytes per span on disk, indexes included\n",
         bytes_per_span);

  printf(
      "{\"spans\":%lld,\"e2e_spans_per_s\":%.0f,\"sqlite_spans_per_s\":%.0f,"
      "\"ratio\":%.3f,\"bytes_per_span\":%.1f,\"export_spans_per_s\":%.0f}\n",
      static_cast<long long>(spans), e2e_rate, sqlite_rate,
      e2e_rate / sqlite_rate, bytes_per_span, export_rate);
  RemoveStore(db);
  RemoveStore(dir + "/meridian-bench-sqlite.db");
  return 0;
}

}  // namespace
}  // namespace meridian

int main(int argc, char** argv) { return meridian::Main(argc, argv); }
