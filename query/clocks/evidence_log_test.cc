// The evidence log beside a real SQLite store (the store that tells its
// writes), against what a scan of the stored chunks gathers.
#include "query/clocks/evidence_log.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "query/clocks/job_clocks.h"
#include "testing/synthetic_job.h"
#include "testing/test_store.h"
#include "wire/batch_builder.h"

namespace meridian {
namespace {

constexpr int64_t kT0 = 1700000000000000000;
constexpr int64_t kMs = 1000000;

struct Written {
  std::string location;
  std::unique_ptr<Store> writer;
};

// A new SQLite store whose writes `log` (if set) hears of.
Written NewStore(EvidenceLog* log) {
  Written out;
  auto location = NewStoreLocation(StoreKind::kSqlite, "evidence-log");
  EXPECT_TRUE(location.ok()) << location.status();
  if (!location.ok()) return out;
  out.location = *location;
  StoreOptions options;
  options.full_sync = false;
  auto opened = Store::Open(out.location, options);
  EXPECT_TRUE(opened.ok()) << opened.status();
  if (!opened.ok()) return out;
  out.writer = std::move(*opened);
  if (log != nullptr) out.writer->Observe(log);
  return out;
}

// A reader as a query opens one: a snapshot, and the job's catalog.
std::unique_ptr<Store> Reader(const std::string& location, JobCatalog* catalog,
                              const std::string& job) {
  StoreOptions options;
  options.read_only = true;
  auto store = Store::Open(location, options);
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return nullptr;
  EXPECT_TRUE((*store)->BeginSnapshot().ok());
  auto loaded = (*store)->LoadCatalog(job);
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return nullptr;
  *catalog = std::move(*loaded);
  return std::move(*store);
}

// What Gather reads from the stored chunks: every evidence span, in the
// scan's order, and each track's first start.
ClockEvidence Scanned(Store& store, const JobCatalog& catalog) {
  absl::flat_hash_map<int64_t, SpanRole> roles;
  for (const OpInfo& op : catalog.ops) {
    if (auto role = EvidenceRole(op.category, op.name)) roles[op.id] = *role;
  }
  ClockEvidence out;
  EXPECT_TRUE(store
                  .Scan(catalog.job, {},
                        [&](const StoredSpan& span) {
                          out.SawStart(span.track_id, span.start_ns);
                          auto role = roles.find(span.op_id);
                          if (role != roles.end()) {
                            out.spans.push_back(EvidenceOf(role->second, span));
                          }
                          return true;
                        })
                  .ok());
  return out;
}

std::string Text(const ClockEvidence& e) {
  std::string out;
  for (const EvidenceSpan& s : e.spans) {
    out +=
        absl::StrCat(s.track_id, " ", s.op_id, " ", s.start_ns, " ", s.dur_ns,
                     " ", s.comm, " ", s.seq, " ", s.has_seq, " ", s.comm_size,
                     " ", s.peer, " ", s.tag, " ", s.recv_peer, " ", s.recv_tag,
                     " [", absl::StrJoin(s.sources, ","), "]\n");
  }
  std::vector<std::pair<int64_t, int64_t>> starts(e.first_start.begin(),
                                                  e.first_start.end());
  std::sort(starts.begin(), starts.end());
  for (const auto& [track, start] : starts) {
    out += absl::StrCat("first ", track, " ", start, "\n");
  }
  return out;
}

// Two ranks on two nodes: Sendrecvs (args), a neighbor collective's
// sources (a string arg), Allreduces, and a kernel-like span that is not
// evidence; two spans of one track start together (ties keep their order).
std::vector<v1::Batch> MixedBatches(int parts) {
  BatchBuilder a("agent-a"), b("agent-b");
  const int pa = a.DeclareProcess({"mixed", "node-a", 0, 0, 100, 0});
  const int pb = b.DeclareProcess({"mixed", "node-b", 1, 0, 101, 0});
  const int ta = a.DeclareTrack(pa, v1::TRACK_KIND_THREAD, 1, "main");
  const int tb = b.DeclareTrack(pb, v1::TRACK_KIND_THREAD, 1, "main");
  std::vector<v1::Batch> out;
  for (int k = 0; k < parts; ++k) {
    const int64_t t = kT0 + k * 10 * kMs;
    for (BatchBuilder* builder : {&a, &b}) {
      const bool first = builder == &a;
      const int track = first ? ta : tb;
      v1::Span* s =
          builder->AddSpan(track, v1::CATEGORY_MPI, "MPI_Sendrecv", t, 2 * kMs);
      s->set_comm(1);
      s->set_peer(first ? 1 : 0);
      s->set_tag(5);
      v1::Arg* peer = s->add_args();
      peer->set_key(builder->String("recv_peer"));
      peer->set_int_(first ? 1 : 0);
      v1::Arg* tag = s->add_args();
      tag->set_key(builder->String("recv_tag"));
      tag->set_int_(5);
      v1::Span* n = builder->AddSpan(
          track, v1::CATEGORY_MPI, "MPI_Neighbor_allgather", t + 3 * kMs, kMs);
      n->set_comm(2);
      n->set_seq(k);
      v1::Arg* sources = n->add_args();
      sources->set_key(builder->String("sources"));
      sources->set_str(builder->String(first ? "1" : "0"));
      builder->AddSpan(track, v1::CATEGORY_CUDA_KERNEL, "kernel", t + 5 * kMs,
                       kMs);
      v1::Span* r = builder->AddSpan(track, v1::CATEGORY_MPI, "MPI_Allreduce",
                                     t + 5 * kMs, kMs);
      r->set_comm(3);
      r->set_seq(k);
    }
    out.push_back(a.Take());
    out.push_back(b.Take());
  }
  return out;
}

TEST(EvidenceLogTest, HoldsWhatAScanOfTheStoredChunksGathers) {
  EvidenceLog log(64 << 20);
  Written store = NewStore(&log);
  ASSERT_NE(store.writer, nullptr);
  const std::vector<v1::Batch> batches = MixedBatches(3);
  for (const v1::Batch& batch : batches) {
    ASSERT_TRUE(store.writer->Write({&batch}).ok());
  }
  JobCatalog catalog;
  auto reader = Reader(store.location, &catalog, "mixed");
  ASSERT_NE(reader, nullptr);
  auto mark = reader->WriteMark(catalog.job.id);
  ASSERT_TRUE(mark.ok());
  const ClockEvidence scanned = Scanned(*reader, catalog);
  ASSERT_EQ(scanned.spans.size(), 18u);  // 3 parts x 2 ranks x 3 MPI spans
  auto taken = log.Take(catalog.job.id, 0, *mark, catalog.job.chunks);
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(Text(*taken), Text(scanned));
  // The args were read: a Sendrecv's receive, a neighbor's sources.
  EXPECT_NE(Text(*taken).find(" 1 5 []\n"), std::string::npos);
  EXPECT_NE(Text(*taken).find(" [1]\n"), std::string::npos);
  const EvidenceLog::Counters c = log.counters();
  EXPECT_EQ(c.taken, 1);
  EXPECT_EQ(c.jobs, 0);  // all taken
  EXPECT_EQ(c.bytes, 0);
  // Taken once: a second Take holds none of them.
  EXPECT_FALSE(log.Take(catalog.job.id, 0, *mark, catalog.job.chunks));
  EXPECT_EQ(log.counters().missed, 1);
}

// Updates of a job's clocks as its batches arrive, with the log and
// without: the same solution as a whole-job solve after every part, and
// with the log no chunk read except where the update must solve whole
// from the store (a node's late batch before its horizon).
TEST(EvidenceLogTest, UpdatesFromTheLogReadNoChunkAndSolveAsTheWholeJob) {
  EvidenceLog log(64 << 20);
  Written store = NewStore(&log);
  ASSERT_NE(store.writer, nullptr);
  SyntheticJob job;
  job.job = "evidence";
  job.ranks = 8;
  job.nodes = 4;
  job.steps = 27;
  job.spans_per_batch = 40;
  job.jitter_ns = 3000;
  job.node_skew_ns = 25000;
  std::vector<std::vector<v1::Batch>> batches;
  for (int node = 0; node < job.nodes; ++node) {
    batches.push_back(SyntheticBatches(job, node));
    ASSERT_EQ(batches.back().size(), 8u);
  }
  ClockSolveState with_log, without;
  with_log.settle_margin_ns = without.settle_margin_ns = 0;
  std::optional<StoredJobResult> stored, stored_without;
  for (size_t i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    std::vector<const v1::Batch*> part;
    for (int node = 0; node < job.nodes; ++node) {
      if (node == 1 && i == 4) continue;
      part.push_back(&batches[node][i]);
    }
    if (i == 6) part.push_back(&batches[1][4]);  // late
    ASSERT_TRUE(store.writer->Write(part).ok());
    JobCatalog catalog;
    auto reader = Reader(store.location, &catalog, "evidence");
    ASSERT_NE(reader, nullptr);
    ScanStats read_with, read_without;
    // Each state trusts the solution it made (as stored, in a collector).
    auto a = JobClocks::Update(*reader, catalog, &stored, nullptr, &read_with,
                               &with_log, &log);
    ASSERT_TRUE(a.ok()) << a.status();
    auto b = JobClocks::Update(*reader, catalog, &stored_without, nullptr,
                               &read_without, &without);
    ASSERT_TRUE(b.ok()) << b.status();
    auto whole = JobClocks::Load(*reader, catalog);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(a->new_solution()->data, whole->new_solution()->data);
    EXPECT_EQ(b->new_solution()->data, whole->new_solution()->data);
    EXPECT_EQ(a->evidence_spans(), b->evidence_spans());
    EXPECT_EQ(with_log.settled_spans, without.settled_spans);
    EXPECT_EQ(Text(ClockEvidence{with_log.open, {}}),
              Text(ClockEvidence{without.open, {}}));
    EXPECT_EQ(with_log.full_solves, without.full_solves);
    EXPECT_EQ(with_log.full_solves, i < 6 ? 1 : 2);
    // Part 6's late batch breaks the state: solved whole from the chunks.
    EXPECT_EQ(read_with.chunks_read, i == 6 ? catalog.job.chunks : 0);
    EXPECT_GT(read_without.chunks_read, 0);
    stored = a->new_solution();
    stored_without = b->new_solution();
  }
  const EvidenceLog::Counters c = log.counters();
  EXPECT_EQ(c.taken, 8);   // every part, and part 6's incremental try
  EXPECT_EQ(c.missed, 1);  // part 6's whole solve, after that Take
  EXPECT_EQ(c.forgotten, 0);
}

// A log that heard of a job only after some of its chunks were written, or
// that forgot it for its bound, misses them, and the update reads them:
// the same answer.
TEST(EvidenceLogTest, WhatTheLogLacksIsReadFromTheStore) {
  for (const bool late : {true, false}) {
    SCOPED_TRACE(late ? "heard late" : "over its bound");
    EvidenceLog log(late ? 64 << 20 : 1);
    Written store = NewStore(late ? nullptr : &log);
    ASSERT_NE(store.writer, nullptr);
    const std::vector<v1::Batch> batches = MixedBatches(2);
    ASSERT_TRUE(store.writer->Write({&batches[0], &batches[1]}).ok());
    if (late) store.writer->Observe(&log);
    ASSERT_TRUE(store.writer->Write({&batches[2], &batches[3]}).ok());
    JobCatalog catalog;
    auto reader = Reader(store.location, &catalog, "mixed");
    ASSERT_NE(reader, nullptr);
    ClockSolveState state;
    ScanStats read;
    auto updated = JobClocks::Update(*reader, catalog, nullptr, nullptr, &read,
                                     &state, &log);
    ASSERT_TRUE(updated.ok()) << updated.status();
    EXPECT_EQ(read.chunks_read, catalog.job.chunks);
    auto whole = JobClocks::Load(*reader, catalog);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(updated->new_solution()->data, whole->new_solution()->data);
    const EvidenceLog::Counters c = log.counters();
    EXPECT_EQ(c.taken, 0);
    EXPECT_EQ(c.missed, 1);
    EXPECT_EQ(c.forgotten, late ? 0 : 2);  // one job, forgotten each write
    EXPECT_EQ(c.bytes, 0);
  }
}

// The observer's contract, told by hand: a rolled-back write leaves
// nothing, a committed one is held until taken, a deleted job is
// forgotten, and a chunk naming an operation it was not told of is missed.
TEST(EvidenceLogTest, RollbacksDeletionsAndUnknownOperations) {
  EvidenceLog log(64 << 20);
  v1::Batch batch;
  batch.add_strings("MPI_Allreduce");
  const std::vector<int64_t> string_id = {11};
  SpanColumns spans;
  spans.Add(kT0 + 5, 7, 21, 0, 0);
  spans.comm[0] = 3;
  spans.seq[0] = 9;
  spans.flags[0] = SpanColumns::kHasSeq;
  spans.Add(kT0 + 9, 2, 22, 0, 0);  // not evidence
  spans.arg_end = {0, 0};
  auto write = [&](int64_t chunk) {
    log.Strings(batch, string_id);
    log.Operation(21, v1::CATEGORY_MPI, "MPI_Allreduce");
    log.Operation(22, v1::CATEGORY_CUDA_KERNEL, "kernel");
    log.Chunk(1, 2, chunk, spans);
  };
  write(3);
  log.RolledBack();
  EXPECT_EQ(log.counters().jobs, 0);
  write(3);
  log.Committed();
  EXPECT_EQ(log.counters().jobs, 1);
  EXPECT_GT(log.counters().bytes, 0);
  auto taken = log.Take(1, 0, 3, 1);
  ASSERT_TRUE(taken.has_value());
  EXPECT_EQ(Text(*taken),
            absl::StrCat("2 21 ", kT0 + 5, " 7 3 9 1 0 -1 0 -1 0 []\nfirst 2 ",
                         kT0 + 5, "\n"));
  write(4);
  log.Committed();
  log.Deleted(1);
  EXPECT_EQ(log.counters().jobs, 0);
  EXPECT_EQ(log.counters().bytes, 0);
  // After a rollback the operation ids are told again; one not told is not
  // guessed.
  log.RolledBack();
  log.Strings(batch, string_id);
  log.Chunk(1, 2, 5, spans);
  log.Committed();
  EXPECT_FALSE(log.Take(1, 4, 5, 1));
}

}  // namespace
}  // namespace meridian
