#include "store/store.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "store/clickhouse_client.h"
#include "store/clickhouse_store.h"
#include "testing/test_store.h"
#include "wire/batch_builder.h"
#include "wire/span_chunk.h"

namespace meridian {
namespace {

constexpr int64_t kT = 1700000000000000000;
const char kAwkward[] = "say \"hi\"\n'; DROP TABLE spans;--";

std::string TempPath(const std::string& name) {
  std::string path =
      std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") +
      "/" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove((path + suffix).c_str());
  }
  return path;
}

// Two ranks, one batch each, on the same job.
std::vector<v1::Batch> TwoBatches() {
  BatchBuilder builder("agent-1");
  int p0 = builder.DeclareProcess({"job-a", "host-0", 0, 0, 100});
  int p1 = builder.DeclareProcess({"job-a", "host-1", 1, 0, 101});
  int t0 = builder.DeclareTrack(p0, v1::TRACK_KIND_THREAD, 1, "main");
  int t1 = builder.DeclareTrack(p1, v1::TRACK_KIND_GPU_STREAM, 7, "");
  v1::Span* s =
      builder.AddSpan(t0, v1::CATEGORY_MPI, "MPI_Allreduce", kT + 50, 1000);
  s->set_bytes(8);
  s->set_comm(0xfedcba9876543210ULL);
  s->set_comm_size(2);
  s->set_seq(3);
  s->set_step(4);
  s->set_peer(1);
  s->set_tag(9);
  s->set_partition(2);
  s->set_correlation(77);
  v1::Arg* arg = s->add_args();
  arg->set_key(builder.String("note"));
  arg->set_str(builder.String(kAwkward));
  arg = s->add_args();
  arg->set_key(builder.String("n"));
  arg->set_int_(-3);
  std::vector<v1::Batch> batches;
  batches.push_back(builder.Take());
  builder.AddSpan(t1, v1::CATEGORY_CUDA_KERNEL, kAwkward, kT, 10);
  v1::Span* counter =
      builder.AddSpan(t1, v1::CATEGORY_USER, "loss", kT + 2000, 0);
  counter->set_kind(v1::SPAN_KIND_COUNTER);
  counter->set_value(0.25);
  batches.push_back(builder.Take());
  return batches;
}

std::vector<StoredSpan> ScanAll(Store& store, const JobInfo& job,
                                ScanRange range = {}) {
  std::vector<StoredSpan> spans;
  EXPECT_TRUE(store
                  .Scan(job, range,
                        [&](const StoredSpan& s) {
                          spans.push_back(s);
                          return true;
                        })
                  .ok());
  return spans;
}

// The suite runs against both stores: SQLite, a real ClickHouse server, and
// ClickHouse over a two-shard cluster of Distributed tables (skipped,
// saying why, where clickhouse-server is not installed).
class StoreTest : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override {
    if (GetParam() != StoreKind::kSqlite) {
      absl::Status started = TestClickHouseServer().status();
      if (started.ok() && GetParam() == StoreKind::kClickHouseDistributed) {
        started = TestClickHouseCluster().status();
      }
      if (absl::IsFailedPrecondition(started)) {
        GTEST_SKIP() << started.message();
      }
      ASSERT_TRUE(started.ok()) << started;
    }
  }
  // A new, empty store's location.
  std::string Location(const std::string& name) {
    auto location = NewStoreLocation(GetParam(), name);
    EXPECT_TRUE(location.ok()) << location.status();
    return location.ok() ? *location : "";
  }
};

INSTANTIATE_TEST_SUITE_P(Stores, StoreTest, AllStoreKinds(), StoreKindName);

std::string OpName(const JobCatalog& catalog, int64_t id) {
  for (const OpInfo& op : catalog.ops) {
    if (op.id == id) return op.name;
  }
  return "(no such operation)";
}

TEST_P(StoreTest, StoresAndReadsBackEveryField) {
  std::string path = Location("fields.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  std::vector<v1::Batch> batches = TwoBatches();
  auto results = (*store)->Write({&batches[0], &batches[1]});
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_FALSE((*results)[0].duplicate);
  EXPECT_EQ((*results)[0].spans_stored, 1);
  EXPECT_EQ((*results)[1].spans_stored, 2);

  auto catalog = (*store)->LoadCatalog("job-a");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(catalog->job.spans, 3);
  EXPECT_EQ(catalog->job.ranks, 2);
  EXPECT_EQ(catalog->job.nodes, 2);
  EXPECT_EQ(catalog->job.min_start_ns, kT);
  EXPECT_EQ(catalog->job.max_end_ns, kT + 2000);
  EXPECT_EQ(catalog->job.max_dur_ns, 1000);
  ASSERT_EQ(catalog->processes.size(), 2u);
  EXPECT_EQ(catalog->processes[1].node, "host-1");
  EXPECT_EQ(catalog->processes[1].pid, 101);
  ASSERT_EQ(catalog->tracks.size(), 2u);
  EXPECT_EQ(catalog->tracks[1].kind, v1::TRACK_KIND_GPU_STREAM);
  EXPECT_EQ(catalog->tracks[1].ext_id, 7);

  std::vector<StoredSpan> spans = ScanAll(**store, catalog->job);
  ASSERT_EQ(spans.size(), 3u);
  // Time order across batches: the kernel (kT) first.
  EXPECT_EQ(spans[0].start_ns, kT);
  EXPECT_EQ(OpName(*catalog, spans[0].op_id), kAwkward);
  const StoredSpan& mpi = spans[1];
  EXPECT_EQ(mpi.start_ns, kT + 50);
  EXPECT_EQ(mpi.dur_ns, 1000);
  EXPECT_EQ(mpi.bytes, 8);
  EXPECT_EQ(mpi.comm, 0xfedcba9876543210ULL);
  EXPECT_EQ(mpi.comm_size, 2u);
  EXPECT_EQ(mpi.seq, 3u);
  EXPECT_EQ(mpi.step, 4);
  EXPECT_EQ(mpi.peer, 1);
  EXPECT_EQ(mpi.tag, 9);
  EXPECT_EQ(mpi.partition, 2);
  EXPECT_EQ(mpi.correlation, 77u);
  ASSERT_EQ(mpi.args.size(), 2u);
  EXPECT_EQ(mpi.args[0].key, "note");
  EXPECT_EQ(mpi.args[0].str, kAwkward);
  EXPECT_EQ(mpi.args[1].int_value, -3);
  EXPECT_FALSE(spans[0].peer.has_value());
  EXPECT_FALSE(spans[0].step.has_value());
  EXPECT_EQ(spans[2].kind, v1::SPAN_KIND_COUNTER);
  EXPECT_EQ(spans[2].value, 0.25);
}

// A scan hands each span's args in storage reused from the span before
// (MergeChunks): none of one span's args may show in the next's.
TEST_P(StoreTest, EachSpansArgsAreItsOwnThoughTheScanReusesTheirStorage) {
  std::string path = Location("args.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  BatchBuilder builder("agent-1");
  int p = builder.DeclareProcess({"job-a", "host-0", 0, 0, 100});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  v1::Span* first = builder.AddSpan(t, v1::CATEGORY_USER, "a", kT, 10);
  v1::Arg* arg = first->add_args();
  arg->set_key(builder.String("text"));
  arg->set_str(builder.String("a long string, longer than a short one"));
  arg = first->add_args();
  arg->set_key(builder.String("count"));
  arg->set_int_(5);
  v1::Span* second = builder.AddSpan(t, v1::CATEGORY_USER, "b", kT + 100, 10);
  arg = second->add_args();
  arg->set_key(builder.String("ratio"));
  arg->set_real(1.5);
  builder.AddSpan(t, v1::CATEGORY_USER, "c", kT + 200, 10);
  v1::Span* fourth = builder.AddSpan(t, v1::CATEGORY_USER, "d", kT + 300, 10);
  arg = fourth->add_args();
  arg->set_key(builder.String("t"));
  arg->set_str(builder.String("x"));
  v1::Batch batch = builder.Take();
  ASSERT_TRUE((*store)->Write({&batch}).ok());
  auto catalog = (*store)->LoadCatalog("job-a");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  std::vector<StoredSpan> spans = ScanAll(**store, catalog->job);
  ASSERT_EQ(spans.size(), 4u);
  ASSERT_EQ(spans[0].args.size(), 2u);
  EXPECT_EQ(spans[0].args[0].key, "text");
  EXPECT_EQ(spans[0].args[0].type, StoredArg::Type::kString);
  EXPECT_EQ(spans[0].args[0].str, "a long string, longer than a short one");
  EXPECT_EQ(spans[0].args[1].key, "count");
  EXPECT_EQ(spans[0].args[1].type, StoredArg::Type::kInt);
  EXPECT_EQ(spans[0].args[1].int_value, 5);
  ASSERT_EQ(spans[1].args.size(), 1u);
  EXPECT_EQ(spans[1].args[0].key, "ratio");
  EXPECT_EQ(spans[1].args[0].type, StoredArg::Type::kReal);
  EXPECT_EQ(spans[1].args[0].real_value, 1.5);
  EXPECT_EQ(spans[1].args[0].str, "");
  EXPECT_EQ(spans[1].args[0].int_value, 0);
  EXPECT_TRUE(spans[2].args.empty());
  ASSERT_EQ(spans[3].args.size(), 1u);
  EXPECT_EQ(spans[3].args[0].key, "t");
  EXPECT_EQ(spans[3].args[0].type, StoredArg::Type::kString);
  EXPECT_EQ(spans[3].args[0].str, "x");
  EXPECT_EQ(spans[3].args[0].int_value, 0);
  EXPECT_EQ(spans[3].args[0].real_value, 0);
}

TEST_P(StoreTest, StoresABatchOnceHoweverOftenItIsSent) {
  std::string path = Location("dup.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  std::vector<v1::Batch> batches = TwoBatches();
  // Twice in one call, and again in a later one.
  auto first = (*store)->Write({&batches[0], &batches[0]});
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE((*first)[0].duplicate);
  EXPECT_TRUE((*first)[1].duplicate);
  auto again = (*store)->Write({&batches[0], &batches[1]});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE((*again)[0].duplicate);
  EXPECT_FALSE((*again)[1].duplicate);
  auto jobs = (*store)->ListJobs();
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].spans, 3);
  EXPECT_EQ(ScanAll(**store, (*jobs)[0]).size(), 3u);
}

TEST_P(StoreTest, KeepsDistinctSpansWithTheSameStartOnOneTrack) {
  std::string path = Location("ties.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  BatchBuilder builder("agent");
  int p = builder.DeclareProcess({"job", "h", 0, 0, 1});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  builder.AddSpan(t, v1::CATEGORY_USER, "step", kT, 100);
  builder.AddSpan(t, v1::CATEGORY_USER, "forward", kT, 40);
  v1::Batch one = builder.Take();
  builder.AddSpan(t, v1::CATEGORY_USER, "forward", kT, 40);  // identical
  v1::Batch two = builder.Take();
  ASSERT_TRUE((*store)->Write({&one}).ok());
  ASSERT_TRUE((*store)->Write({&two}).ok());
  auto catalog = (*store)->LoadCatalog("job");
  ASSERT_TRUE(catalog.ok());
  std::vector<StoredSpan> spans = ScanAll(**store, catalog->job);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].dur_ns, 100);  // arrival order among ties
  EXPECT_EQ(spans[1].dur_ns, 40);
  EXPECT_EQ(spans[2].dur_ns, 40);
}

// Two batches of one write: their chunks are distinct (a scan counts both)
// and their spans of one start keep arrival order.
TEST_P(StoreTest, ChunksOfOneWriteAreDistinctAndKeepArrivalOrder) {
  auto store = Store::Open(Location("one-write.db"));
  ASSERT_TRUE(store.ok());
  BatchBuilder builder("agent");
  int p = builder.DeclareProcess({"job", "h", 0, 0, 1});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  std::vector<v1::Batch> batches;
  for (int b = 0; b < 3; ++b) {
    builder.AddSpan(t, v1::CATEGORY_USER, "x", kT, 10 + b);
    batches.push_back(builder.Take());
  }
  ASSERT_TRUE((*store)->Write({&batches[0], &batches[1], &batches[2]}).ok());
  auto catalog = (*store)->LoadCatalog("job");
  ASSERT_TRUE(catalog.ok());
  ScanStats stats;
  std::vector<int64_t> durs;
  ASSERT_TRUE((*store)
                  ->Scan(
                      catalog->job, {},
                      [&](const StoredSpan& s) {
                        durs.push_back(s.dur_ns);
                        return true;
                      },
                      &stats)
                  .ok());
  EXPECT_EQ(durs, (std::vector<int64_t>{10, 11, 12}));
  EXPECT_EQ(stats.chunks_read, 3);
  EXPECT_EQ(stats.chunk_ids.size(), 3u);
}

// A coarse clock can give thousands of spans one start: each is numbered
// with one lookup of the largest number so far, in arrival order.
TEST_P(StoreTest, NumbersThousandsOfSpansWithOneStartInArrivalOrder) {
  std::string path = Location("many-ties.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  BatchBuilder builder("agent");
  int p = builder.DeclareProcess({"job", "h", 0, 0, 1});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  std::vector<v1::Batch> batches;
  for (int b = 0; b < 2; ++b) {
    for (int i = 0; i < 3000; ++i) {
      builder.AddSpan(t, v1::CATEGORY_MPI, "MPI_Allreduce", kT, b * 3000 + i);
    }
    batches.push_back(builder.Take());
  }
  ASSERT_TRUE((*store)->Write({&batches[0]}).ok());
  ASSERT_TRUE((*store)->Write({&batches[1]}).ok());
  auto catalog = (*store)->LoadCatalog("job");
  ASSERT_TRUE(catalog.ok());
  std::vector<StoredSpan> spans = ScanAll(**store, catalog->job);
  ASSERT_EQ(spans.size(), 6000u);
  for (int i = 0; i < 6000; ++i) {
    ASSERT_EQ(spans[i].dur_ns, i);
    ASSERT_EQ(spans[i].start_ns, kT);
  }
}

TEST_P(StoreTest, ScansTimeAndStepRanges) {
  std::string path = Location("range.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  BatchBuilder builder("agent");
  int p = builder.DeclareProcess({"job", "h", 0, 0, 1});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  for (int i = 0; i < 10; ++i) {
    builder.AddSpan(t, v1::CATEGORY_USER, "step", kT + i * 1000, 1500)
        ->set_step(i);
  }
  v1::Batch batch = builder.Take();
  ASSERT_TRUE((*store)->Write({&batch}).ok());
  auto catalog = (*store)->LoadCatalog("job");
  ASSERT_TRUE(catalog.ok());
  ScanRange range;
  range.from_ns = 3200;  // step 2 ends at 3500: included
  range.to_ns = 6000;    // step 6 starts at 6000: excluded
  std::vector<StoredSpan> spans = ScanAll(**store, catalog->job, range);
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans.front().step, 2);
  EXPECT_EQ(spans.back().step, 5);
  ScanRange steps;
  steps.first_step = 8;
  spans = ScanAll(**store, catalog->job, steps);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].step, 8);
}

// A write mark, then the steps of what was written after it: each later
// chunk's step range once, cut at `up_to`; a resent batch adds nothing.
// (No margin: the default's is checked below.)
TEST_P(StoreTest, TellsTheStepsWrittenAfterAMark) {
  StoreOptions exact;
  exact.write_mark_margin_ns = 0;
  const std::string location = Location("marks.db");
  auto store = Store::Open(location, exact);
  ASSERT_TRUE(store.ok());
  BatchBuilder builder("agent");
  int p = builder.DeclareProcess({"job", "h", 0, 0, 1});
  int main = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  int comm = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 2, "comm");
  auto steps = [&](int track, int first, int last) {
    for (int i = first; i <= last; ++i) {
      builder.AddSpan(track, v1::CATEGORY_USER, "step", kT + i * 1000, 500)
          ->set_step(i);
    }
  };
  steps(main, 0, 9);
  v1::Batch early = builder.Take();
  ASSERT_TRUE((*store)->Write({&early}).ok());
  auto catalog = (*store)->LoadCatalog("job");
  ASSERT_TRUE(catalog.ok());
  const int64_t job = catalog->job.id;
  auto mark = (*store)->WriteMark(job);
  ASSERT_TRUE(mark.ok()) << mark.status();
  EXPECT_GT(*mark, 0);
  auto none = (*store)->StepsWrittenAfter(job, *mark, 100);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());

  steps(comm, 2, 4);  // one chunk a track
  steps(main, 10, 12);
  builder.AddSpan(comm, v1::CATEGORY_USER, "no step", kT, 10);
  v1::Batch late = builder.Take();
  ASSERT_TRUE((*store)->Write({&late}).ok());
  ASSERT_TRUE((*store)->Write({&late}).ok());  // resent: a duplicate
  auto later = (*store)->WriteMark(job);
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_GT(*later, *mark);
  auto ranges = (*store)->StepsWrittenAfter(job, *mark, 100);
  ASSERT_TRUE(ranges.ok()) << ranges.status();
  EXPECT_EQ(*ranges,
            (std::vector<std::pair<int64_t, int64_t>>{{2, 4}, {10, 12}}));
  auto low = (*store)->StepsWrittenAfter(job, *mark, 9);
  ASSERT_TRUE(low.ok()) << low.status();
  EXPECT_EQ(*low, (std::vector<std::pair<int64_t, int64_t>>{{2, 4}}));
  auto since_later = (*store)->StepsWrittenAfter(job, *later, 100);
  ASSERT_TRUE(since_later.ok()) << since_later.status();
  EXPECT_TRUE(since_later->empty());
  auto unknown = (*store)->WriteMark(job + 1000);
  ASSERT_TRUE(unknown.ok()) << unknown.status();
  EXPECT_EQ(*unknown, 0);

  // ClickHouse's default margin (5 s) reports the writes of the last 5 s
  // again: both, here (this test takes well under 5 s). SQLite has none.
  auto margined = Store::Open(location);
  ASSERT_TRUE(margined.ok());
  auto default_mark = (*margined)->WriteMark(job);
  ASSERT_TRUE(default_mark.ok()) << default_mark.status();
  auto again = (*margined)->StepsWrittenAfter(job, *default_mark, 100);
  ASSERT_TRUE(again.ok()) << again.status();
  if (GetParam() == StoreKind::kSqlite) {
    EXPECT_EQ(*default_mark, *later);
    EXPECT_TRUE(again->empty());
  } else {
    EXPECT_EQ(*default_mark, *later - 5'000'000'000);
    EXPECT_EQ(*again, (std::vector<std::pair<int64_t, int64_t>>{
                          {0, 9}, {2, 4}, {10, 12}}));
  }
}

TEST_P(StoreTest, SurvivesReopenAndNamesUnknownJobs) {
  std::string path = Location("reopen.db");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok());
    std::vector<v1::Batch> batches = TwoBatches();
    ASSERT_TRUE((*store)->Write({&batches[0]}).ok());
  }
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  std::vector<v1::Batch> batches = TwoBatches();
  auto results = (*store)->Write({&batches[0], &batches[1]});
  ASSERT_TRUE(results.ok());
  EXPECT_TRUE((*results)[0].duplicate);
  auto catalog = (*store)->LoadCatalog("job-a");
  ASSERT_TRUE(catalog.ok());
  EXPECT_EQ(catalog->job.spans, 3);
  EXPECT_EQ((*store)->LoadCatalog("job-b").status().message(),
            "no job \"job-b\" in store " + path +
                " (`meridian jobs` lists the stored jobs)");
}

TEST_P(StoreTest, ASnapshotHidesWhatIsCommittedAfterIt) {
  std::string path = Location("snapshot.db");
  auto writer = Store::Open(path);
  ASSERT_TRUE(writer.ok());
  std::vector<v1::Batch> batches = TwoBatches();
  ASSERT_TRUE((*writer)->Write({&batches[0]}).ok());

  StoreOptions read_only;
  read_only.read_only = true;
  auto reader = Store::Open(path, read_only);
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE((*reader)->BeginSnapshot().ok());
  auto catalog = (*reader)->LoadCatalog("job-a");
  ASSERT_TRUE(catalog.ok());
  // A new track and new operations arrive after the catalog was loaded.
  ASSERT_TRUE((*writer)->Write({&batches[1]}).ok());
  std::vector<StoredSpan> spans = ScanAll(**reader, catalog->job);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].start_ns, kT + 50);
  EXPECT_EQ(catalog->tracks.size(), 1u);
  // A new reader sees everything.
  auto later = Store::Open(path, read_only);
  EXPECT_EQ((*later)->LoadCatalog("job-a")->job.spans, 3);
}

TEST(SqliteStoreTest, RefusesFilesThatAreNotMeridianStores) {
  std::string path = TempPath("garbage.db");
  {
    std::ofstream file(path);
    file << "this is not a database, just text that is long enough to fill "
            "a header of a hundred bytes or so for SQLite to look at it....";
  }
  auto store = Store::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find(path), absl::string_view::npos);
}

TEST(SqliteStoreTest, AFailedWriteChangesNothingAndARetryStoresEverythingOnce) {
  std::string path = TempPath("fail.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  std::vector<v1::Batch> batches = TwoBatches();
  ASSERT_TRUE((*store)->Write({&batches[0]}).ok());

  // Fault injection: a trigger that fails the insert of one chunk, so the
  // second batch of a group fails after the first was written.
  BatchBuilder builder("agent-2");
  int p = builder.DeclareProcess({"job-new", "host-9", 5, 0, 9});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  builder.AddSpan(t, v1::CATEGORY_USER, "fine", kT, 10);
  v1::Batch fine = builder.Take();
  builder.AddSpan(t, v1::CATEGORY_USER, "poison", kT, 666);
  v1::Batch poison = builder.Take();
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other,
                         "CREATE TRIGGER fault BEFORE INSERT ON chunks "
                         "WHEN NEW.max_end - NEW.first_start = 666 BEGIN "
                         "SELECT RAISE(ABORT, 'injected fault'); END;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  auto failed = (*store)->Write({&fine, &batches[1], &poison});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(),
            "storing a chunk failed in store " + path + ": injected fault");

  // Nothing of the failed call is visible: no new job, no new spans.
  auto jobs = (*store)->ListJobs();
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].name, "job-a");
  EXPECT_EQ((*jobs)[0].spans, 1);

  // Once the fault is gone the same batches are stored, none as duplicate.
  ASSERT_EQ(
      sqlite3_exec(other, "DROP TRIGGER fault;", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(other);
  auto retried = (*store)->Write({&fine, &batches[1], &poison});
  ASSERT_TRUE(retried.ok()) << retried.status();
  for (const BatchWriteResult& r : *retried) EXPECT_FALSE(r.duplicate);
  auto catalog = (*store)->LoadCatalog("job-new");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(catalog->job.spans, 2);
  EXPECT_EQ(catalog->processes[0].node, "host-9");
  EXPECT_EQ((*store)->LoadCatalog("job-a")->job.spans, 3);
}

TEST_P(StoreTest, AReadOnlyStoreRefusesWritesNamingTheStore) {
  std::string path = Location("readonly.db");
  ASSERT_TRUE(Store::Open(path).ok());
  StoreOptions read_only;
  read_only.read_only = true;
  auto reader = Store::Open(path, read_only);
  ASSERT_TRUE(reader.ok()) << reader.status();
  std::vector<v1::Batch> batches = TwoBatches();
  auto failed = (*reader)->Write({&batches[0]});
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find(path), absl::string_view::npos);
}

// A batch of agent `agent` carrying clock model (reference, offset) of
// `node`.
v1::Batch ClockBatch(const std::string& agent, uint64_t seq,
                     const std::string& node, int64_t reference, int64_t offset,
                     const std::string& job = "job-c") {
  BatchBuilder builder(agent, seq);
  int p = builder.DeclareProcess({job, node, 0, 0, 7});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  builder.AddSpan(t, v1::CATEGORY_USER, "step", reference, 10);
  const uint32_t node_index = builder.String(node);
  v1::Batch batch = builder.Take();
  v1::ClockModel* clock = batch.mutable_clock();
  clock->set_node(node_index);
  clock->set_reference_ns(reference);
  clock->set_offset_ns(offset);
  clock->set_drift_ppb(-250);
  clock->set_uncertainty_ns(40);
  return batch;
}

// Deleting a job takes its spans, processes and tracks and nothing of other
// jobs; spans that arrive for it later start it afresh.
// Each batch declares its processes with what their probes dropped so far:
// the store keeps each process's largest count (batches arrive in any
// order), and a job's is the sum of its processes'.
TEST_P(StoreTest, KeepsEachProcesssLargestDroppedCountAndSumsThemPerJob) {
  auto store = Store::Open(Location("dropped.db"));
  ASSERT_TRUE(store.ok()) << store.status();
  BatchBuilder builder("agent-d");
  auto batch = [&](uint64_t dropped0, uint64_t dropped1, int64_t at) {
    const int p0 =
        builder.DeclareProcess({"lossy", "host-0", 0, 0, 100, 2, dropped0});
    const int p1 =
        builder.DeclareProcess({"lossy", "host-0", 1, 1, 101, 2, dropped1});
    builder.AddSpan(builder.DeclareTrack(p0, v1::TRACK_KIND_THREAD, 1, "m"),
                    v1::CATEGORY_MPI, "MPI_Allreduce", kT + at, 10);
    builder.AddSpan(builder.DeclareTrack(p1, v1::TRACK_KIND_THREAD, 1, "m"),
                    v1::CATEGORY_MPI, "MPI_Allreduce", kT + at, 10);
    v1::Batch taken = builder.Take();
    builder.ForgetDeclarations();
    return taken;
  };
  std::vector<v1::Batch> batches;
  batches.push_back(batch(0, 0, 0));
  batches.push_back(batch(171503, 7, 100));
  batches.push_back(batch(5, 3, 200));  // an older count, written later
  for (const v1::Batch& b : batches) ASSERT_TRUE((*store)->Write({&b}).ok());
  auto jobs = (*store)->ListJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].spans, 6);
  EXPECT_EQ((*jobs)[0].spans_dropped, 171510);
  auto catalog = (*store)->LoadCatalog("lossy");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  ASSERT_EQ(catalog->processes.size(), 2u);
  EXPECT_EQ(catalog->processes[0].dropped, 171503);
  EXPECT_EQ(catalog->processes[1].dropped, 7);
  EXPECT_EQ(catalog->job.spans_dropped, 171510);
}

TEST_P(StoreTest, DeletesAJobWholeAndOnlyIt) {
  const std::string path = Location("delete.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  std::vector<v1::Batch> batches = {
      ClockBatch("agent-a", 1, "n1", kT + 1000, -500, "job-a"),
      ClockBatch("agent-b", 1, "n2", kT + 1000, 700, "job-b")};
  ASSERT_TRUE((*store)->Write({&batches[0], &batches[1]}).ok());
  auto spans = (*store)->DeleteJob("job-a");
  ASSERT_TRUE(spans.ok()) << spans.status();
  EXPECT_EQ(*spans, 1);
  auto jobs = (*store)->ListJobs();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].name, "job-b");
  EXPECT_EQ((*store)->LoadCatalog("job-a").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ((*store)->DeleteJob("job-a").status().message(),
            "no job \"job-a\" in store " + path);
  // New spans of the deleted job (a new batch) start it afresh.
  std::vector<v1::Batch> later = {
      ClockBatch("agent-a", 2, "n1", kT + 5000, -500, "job-a")};
  ASSERT_TRUE((*store)->Write({&later[0]}).ok());
  auto catalog = (*store)->LoadCatalog("job-a");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(catalog->job.spans, 1);
  EXPECT_EQ(catalog->processes.size(), 1u);
  // Retention: jobs that ended before the cutoff go.
  auto deleted = (*store)->DeleteJobsEndedBefore(kT + 2000);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, std::vector<std::string>{"job-b"});
  EXPECT_EQ((*store)->ListJobs()->size(), 1u);
}

// A batch of imported statistics for `job`'s rank `rank`: MPI_Send with
// `calls` calls of 8 bytes and the rank's comm and elapsed times.
v1::Batch TotalsBatch(const std::string& agent, uint64_t seq,
                      const std::string& job, int32_t rank, int64_t calls) {
  BatchBuilder builder(agent, seq);
  const int p = builder.DeclareProcess({job, "host-0", rank, -1, 0});
  v1::ImportedOpTotals* op =
      builder.AddOpTotals(p, v1::CATEGORY_MPI, "MPI_Send");
  op->set_calls(calls);
  op->set_bytes(8 * calls);
  op->set_dur_ns(1000 * calls);
  v1::ImportedSizeTotals* size = op->add_sizes();
  size->set_log2(3);
  size->set_calls(calls);
  size->set_bytes(8 * calls);
  size->set_dur_ns(1000 * calls);
  v1::ImportedProcessTotals* totals = builder.AddProcessTotals(p, "mpitrace");
  totals->set_comm_ns(1000 * calls);
  totals->set_elapsed_ns(5000000);
  totals->set_user_ns(2000 * calls);
  totals->set_max_rss_bytes(int64_t{1} << 30);  // system time, switches: none
  return builder.Take();
}

TEST_P(StoreTest, StoresImportedTotalsReplacingOlderOnesAndDeletesThem) {
  const std::string path = Location("totals.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  std::vector<v1::Batch> batches = {TotalsBatch("import-1", 1, "job-t", 3, 4),
                                    TotalsBatch("import-1", 1, "job-t", 3, 4),
                                    TotalsBatch("import-2", 1, "job-u", 0, 9)};
  auto written = (*store)->Write({&batches[0], &batches[1], &batches[2]});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_TRUE((*written)[1].duplicate);
  auto catalog = (*store)->LoadCatalog("job-t");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  ASSERT_EQ(catalog->processes.size(), 1u);
  EXPECT_EQ(catalog->processes[0].rank, 3);
  EXPECT_EQ(catalog->job.spans, 0);
  auto totals = (*store)->LoadTotals(catalog->job.id);
  ASSERT_TRUE(totals.ok()) << totals.status();
  ASSERT_EQ(totals->ops.size(), 1u);
  const StoredOpTotals& op = totals->ops[0];
  EXPECT_EQ(op.process_id, catalog->processes[0].id);
  EXPECT_EQ(op.calls, 4);
  EXPECT_EQ(op.bytes, 32);
  EXPECT_EQ(op.dur_ns, 4000);
  ASSERT_EQ(op.sizes.size(), 1u);
  EXPECT_EQ(op.sizes[0].log2, 3);
  EXPECT_EQ(op.sizes[0].calls, 4);
  const auto name =
      std::find_if(catalog->ops.begin(), catalog->ops.end(),
                   [&](const OpInfo& info) { return info.id == op.op_id; });
  ASSERT_NE(name, catalog->ops.end());
  EXPECT_EQ(name->name, "MPI_Send");
  EXPECT_EQ(name->category, v1::CATEGORY_MPI);
  ASSERT_EQ(totals->processes.size(), 1u);
  EXPECT_EQ(totals->processes[0].comm_ns, 4000);
  EXPECT_EQ(totals->processes[0].elapsed_ns, 5000000);
  EXPECT_EQ(totals->processes[0].source, "mpitrace");
  EXPECT_EQ(totals->processes[0].user_ns, 8000);
  EXPECT_EQ(totals->processes[0].system_ns, std::nullopt);
  EXPECT_EQ(totals->processes[0].max_rss_bytes, int64_t{1} << 30);
  EXPECT_EQ(totals->processes[0].context_switches, std::nullopt);

  // A later measurement of the same rank replaces the first.
  std::vector<v1::Batch> again = {TotalsBatch("import-3", 1, "job-t", 3, 6)};
  ASSERT_TRUE((*store)->Write({&again[0]}).ok());
  totals = (*store)->LoadTotals(catalog->job.id);
  ASSERT_EQ(totals->ops.size(), 1u);
  EXPECT_EQ(totals->ops[0].calls, 6);
  EXPECT_EQ(totals->ops[0].sizes.size(), 1u);
  EXPECT_EQ(totals->processes[0].comm_ns, 6000);

  // Deleting the job deletes its totals, and only its.
  ASSERT_TRUE((*store)->DeleteJob("job-t").ok());
  EXPECT_TRUE((*store)->LoadTotals(catalog->job.id)->ops.empty());
  auto other = (*store)->LoadCatalog("job-u");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ((*store)->LoadTotals(other->job.id)->ops.size(), 1u);
}

// The writer's id caches (LRU) stay within their bound whatever arrives,
// and what is stored is the same as with unbounded caches.
TEST_P(StoreTest, IdCachesStayBounded) {
  StoreOptions options;
  options.max_cached_ids = 8;
  auto store = Store::Open(Location("bounded-caches.db"), options);
  ASSERT_TRUE(store.ok());
  for (int i = 0; i < 40; ++i) {
    BatchBuilder builder("agent", i + 1);
    int p = builder.DeclareProcess({"job", "host", 0, 0, 7});
    int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
    builder.AddSpan(t, v1::CATEGORY_USER, "name-" + std::to_string(i),
                    kT + i * 100, 10);
    v1::Batch batch = builder.Take();
    ASSERT_TRUE((*store)->Write({&batch}).ok());
    EXPECT_LE((*store)->cached_ids(), 5u * 8);  // each of 5 caches <= 8
  }
  auto catalog = (*store)->LoadCatalog("job");
  ASSERT_TRUE(catalog.ok());
  EXPECT_EQ(catalog->job.spans, 40);
  EXPECT_EQ(catalog->processes.size(), 1u);
  EXPECT_EQ(catalog->tracks.size(), 1u);
  std::set<std::string> names;
  ASSERT_TRUE((*store)
                  ->Scan(catalog->job, {},
                         [&](const StoredSpan& span) {
                           for (const OpInfo& op : catalog->ops) {
                             if (op.id == span.op_id) names.insert(op.name);
                           }
                           return true;
                         })
                  .ok());
  EXPECT_EQ(names.size(), 40u);
}

// A job id with no recorded agents: every model of the node applies.
constexpr int64_t kAnyJob = 999;

TEST_P(StoreTest, KeepsEachNodesClockModelsOnceInReferenceOrder) {
  auto store = Store::Open(Location("clocks.db"));
  ASSERT_TRUE(store.ok());
  // Node a sends model 2 before model 1 and model 2 twice (two batches);
  // node b one model.
  std::vector<v1::Batch> batches = {
      ClockBatch("agent-a", 1, "a", kT + 2000, -700),
      ClockBatch("agent-a", 2, "a", kT + 2000, -700),
      ClockBatch("agent-a", 3, "a", kT + 1000, -500),
      ClockBatch("agent-b", 1, "b", kT + 1500, 900)};
  ASSERT_TRUE((*store)
                  ->Write({&batches[0], &batches[1], &batches[2], &batches[3]})
                  .ok());
  auto a = (*store)->LoadClockModels("a", kAnyJob);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->size(), 2u);
  EXPECT_EQ((*a)[0].reference_ns, kT + 1000);
  EXPECT_EQ((*a)[0].offset_ns, -500);
  EXPECT_EQ((*a)[0].drift_ppb, -250);
  EXPECT_EQ((*a)[0].uncertainty_ns, 40);
  EXPECT_EQ((*a)[1].reference_ns, kT + 2000);
  EXPECT_EQ((*a)[1].offset_ns, -700);
  auto b = (*store)->LoadClockModels("b", kAnyJob);
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(b->size(), 1u);
  EXPECT_EQ((*b)[0].offset_ns, 900);
  auto none = (*store)->LoadClockModels("c", kAnyJob);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// Before: one batch of another job (another agent) carrying a 5 s offset
// for node n1 rewrote the timeline of a job stored earlier on n1.
TEST_P(StoreTest, AJobsTimelineUsesOnlyItsOwnAgentsClockModels) {
  const std::string path = Location("clock-tenants.db");
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  std::vector<v1::Batch> batches = {
      ClockBatch("agent-a", 1, "n1", kT + 1000, -500, "job-a"),
      ClockBatch("intruder", 1, "n1", kT + 1000, 5000000000, "job-b"),
      ClockBatch("intruder", 2, "n1", kT + 3000, 5000000000, "job-b")};
  ASSERT_TRUE((*store)->Write({&batches[0], &batches[1], &batches[2]}).ok());
  const int64_t job_a = (*store)->LoadCatalog("job-a")->job.id;
  const int64_t job_b = (*store)->LoadCatalog("job-b")->job.id;
  auto a = (*store)->LoadClockModels("n1", job_a);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->size(), 1u);
  EXPECT_EQ((*a)[0].offset_ns, -500);
  auto b = (*store)->LoadClockModels("n1", job_b);
  ASSERT_EQ(b->size(), 2u);
  EXPECT_EQ((*b)[0].offset_ns, 5000000000);
}

// Stores TwoBatches() in a new SQLite store at `path`, closes it, then
// runs `sql` on the file (an older version's schema, made by hand).
void StoreTwoBatchesThenRewrite(const std::string& path, const char* sql) {
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    std::vector<v1::Batch> batches = TwoBatches();
    ASSERT_TRUE((*store)->Write({&batches[0], &batches[1]}).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

// What version 8 added (an older store has none of it): SQL text, joined
// to the statements around it.
#define MERIDIAN_DROP_VERSION_8_COLUMNS \
  "ALTER TABLE processes DROP COLUMN dropped;"
// What versions 6 to 8 added.
#define MERIDIAN_DROP_VERSION_6_COLUMNS                      \
  "ALTER TABLE process_totals DROP COLUMN user_ns;"          \
  "ALTER TABLE process_totals DROP COLUMN system_ns;"        \
  "ALTER TABLE process_totals DROP COLUMN max_rss_bytes;"    \
  "ALTER TABLE process_totals DROP COLUMN context_switches;" \
  "ALTER TABLE jobs DROP COLUMN bytes;"                      \
  "ALTER TABLE jobs DROP COLUMN written_ns;" MERIDIAN_DROP_VERSION_8_COLUMNS

// A version 3 store (clock models keyed by node only) is upgraded in
// place: its models are kept, now under the agent that sent them.
TEST(SqliteStoreTest, UpgradesAVersion3Store) {
  const std::string path = TempPath("v3.db");
  {
    auto store = Store::Open(path);
    std::vector<v1::Batch> batches = {
        ClockBatch("agent-a", 1, "a", kT + 1000, -500)};
    ASSERT_TRUE((*store)->Write({&batches[0]}).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TABLE clock_models(node INTEGER NOT NULL, "
                         "reference_ns INTEGER NOT NULL, offset_ns INTEGER NOT "
                         "NULL, drift_ppb INTEGER NOT NULL, uncertainty_ns "
                         "INTEGER NOT NULL, agent TEXT NOT NULL, PRIMARY "
                         "KEY(node, reference_ns)) WITHOUT ROWID;"
                         "INSERT INTO clock_models SELECT node, reference_ns, "
                         "offset_ns, drift_ppb, uncertainty_ns, agent FROM "
                         "agent_clock_models;"
                         "DROP TABLE agent_clock_models; DROP TABLE job_agents;"
                         "ALTER TABLE processes DROP COLUMN "
                         "world_size;" MERIDIAN_DROP_VERSION_6_COLUMNS
                         "UPDATE meta SET value=3 WHERE key='schema_version';",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  auto models = (*store)->LoadClockModels("a", kAnyJob);
  ASSERT_TRUE(models.ok()) << models.status();
  ASSERT_EQ(models->size(), 1u);
  EXPECT_EQ((*models)[0].offset_ns, -500);
}

// A version 4 store (no world sizes) is upgraded in place: its processes
// are kept, their world size unknown (0) until a process reports one.
TEST(SqliteStoreTest, UpgradesAVersion4StoreAndRecordsWorldSizes) {
  const std::string path = TempPath("v4.db");
  ASSERT_NO_FATAL_FAILURE(StoreTwoBatchesThenRewrite(
      path,
      "ALTER TABLE processes DROP COLUMN "
      "world_size;" MERIDIAN_DROP_VERSION_6_COLUMNS
      "UPDATE meta SET value=4 WHERE key='schema_version';"));
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  auto jobs = (*store)->ListJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].ranks, 2);
  EXPECT_EQ((*jobs)[0].world_size, 0);
  // Rank 1 of the same process reports a world of 4 (MPI_Init learnt it);
  // a process of unknown rank is no rank seen.
  BatchBuilder builder("agent-2");
  const int p1 =
      builder.DeclareProcess({"job-a", "host-1", 1, 0, 101, /*world=*/4});
  const int unknown = builder.DeclareProcess({"job-a", "host-2", -1, -1, 7});
  builder.AddSpan(builder.DeclareTrack(p1, v1::TRACK_KIND_THREAD, 1, "main"),
                  v1::CATEGORY_USER, "step", kT, 10);
  builder.AddSpan(
      builder.DeclareTrack(unknown, v1::TRACK_KIND_THREAD, 1, "main"),
      v1::CATEGORY_USER, "step", kT, 10);
  v1::Batch batch = builder.Take();
  ASSERT_TRUE((*store)->Write({&batch}).ok());
  jobs = (*store)->ListJobs();
  EXPECT_EQ((*jobs)[0].ranks, 2);
  EXPECT_EQ((*jobs)[0].world_size, 4);
  EXPECT_EQ((*store)->LoadCatalog("job-a")->processes.size(), 3u);
}

// A version 5 store (imported totals without resource use) is upgraded in
// place: its totals are kept, their resource use unknown until imported
// again.
TEST(SqliteStoreTest, UpgradesAVersion5StoreKeepingItsImportedTotals) {
  const std::string path = TempPath("v5.db");
  {
    auto store = Store::Open(path);
    std::vector<v1::Batch> batches = {
        TotalsBatch("import-1", 1, "job-t", 3, 4)};
    ASSERT_TRUE((*store)->Write({&batches[0]}).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE process_totals SET user_ns=NULL, "
                         "max_rss_bytes=NULL;" MERIDIAN_DROP_VERSION_6_COLUMNS
                         "UPDATE meta SET value=5 WHERE key='schema_version';",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  auto catalog = (*store)->LoadCatalog("job-t");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  auto totals = (*store)->LoadTotals(catalog->job.id);
  ASSERT_TRUE(totals.ok()) << totals.status();
  ASSERT_EQ(totals->processes.size(), 1u);
  EXPECT_EQ(totals->processes[0].comm_ns, 4000);
  EXPECT_EQ(totals->processes[0].user_ns, std::nullopt);
  std::vector<v1::Batch> again = {TotalsBatch("import-2", 1, "job-t", 3, 4)};
  ASSERT_TRUE((*store)->Write({&again[0]}).ok());
  totals = (*store)->LoadTotals(catalog->job.id);
  EXPECT_EQ(totals->processes[0].user_ns, 8000);
  EXPECT_EQ(totals->processes[0].max_rss_bytes, int64_t{1} << 30);
}

// The sum of the encoded chunks of the store's only job.
int64_t ChunkBytes(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT sum(length(data)) FROM chunks", -1,
                               &stmt, nullptr),
            SQLITE_OK);
  EXPECT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  const int64_t bytes = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return bytes;
}

// A job's stored bytes are counted as its chunks are written; a version 6
// store's are counted once when it is upgraded.
TEST(SqliteStoreTest, CountsEachJobsStoredBytesAndUpgradesAVersion6Store) {
  const std::string path = TempPath("v6.db");
  int64_t written = 0;
  {
    auto store = Store::Open(path);
    std::vector<v1::Batch> batches = TwoBatches();
    ASSERT_TRUE((*store)->Write({&batches[0]}).ok());
    ASSERT_TRUE((*store)->Write({&batches[1]}).ok());
    written = (*(*store)->ListJobs())[0].bytes;
  }
  EXPECT_GT(written, 0);
  EXPECT_EQ(written, ChunkBytes(path));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "ALTER TABLE jobs DROP COLUMN bytes;"
                         "ALTER TABLE jobs DROP COLUMN "
                         "written_ns;" MERIDIAN_DROP_VERSION_8_COLUMNS
                         "UPDATE meta SET value=6 WHERE key='schema_version';",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*(*store)->ListJobs())[0].bytes, written);
}

// Clock evidence was a second copy of every MPI span: a store that still
// holds it loses the table (and its bytes' pages go back to the free list)
// at the first open for writing; its spans are untouched.
TEST(SqliteStoreTest, DropsTheClockEvidenceOfAnOlderStoreKeepingItsSpans) {
  const std::string path = TempPath("evidence.db");
  ASSERT_NO_FATAL_FAILURE(StoreTwoBatchesThenRewrite(
      path,
      "CREATE TABLE clock_evidence(job INTEGER NOT NULL, "
      "mark INTEGER NOT NULL, data BLOB NOT NULL, "
      "PRIMARY KEY(job, mark)) WITHOUT ROWID;"
      "INSERT INTO clock_evidence VALUES(1, 1, x'00');"));
  StoreOptions read_only;
  read_only.read_only = true;
  {
    // A reader leaves the file alone.
    auto reader = Store::Open(path, read_only);
    ASSERT_TRUE(reader.ok()) << reader.status();
  }
  auto count = [&](const char* sql) {
    sqlite3* check = nullptr;
    EXPECT_EQ(sqlite3_open(path.c_str(), &check), SQLITE_OK);
    sqlite3_stmt* statement = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(check, sql, -1, &statement, nullptr),
              SQLITE_OK);
    EXPECT_EQ(sqlite3_step(statement), SQLITE_ROW);
    const int64_t n = sqlite3_column_int64(statement, 0);
    sqlite3_finalize(statement);
    sqlite3_close(check);
    return n;
  };
  constexpr const char* kTables =
      "SELECT count(*) FROM sqlite_master WHERE name='clock_evidence'";
  EXPECT_EQ(count(kTables), 1);
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status();
    auto jobs = (*store)->ListJobs();
    ASSERT_TRUE(jobs.ok());
    ASSERT_EQ(jobs->size(), 1u);
    EXPECT_EQ((*jobs)[0].spans, 3);
  }
  EXPECT_EQ(count(kTables), 0);
}

// A version 7 store (no dropped counts) is upgraded in place: its
// processes dropped nothing until a batch says otherwise.
TEST(SqliteStoreTest, UpgradesAVersion7StoreWithNothingDropped) {
  const std::string path = TempPath("v7.db");
  ASSERT_NO_FATAL_FAILURE(StoreTwoBatchesThenRewrite(
      path, MERIDIAN_DROP_VERSION_8_COLUMNS
      "UPDATE meta SET value=7 WHERE key='schema_version';"));
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*(*store)->ListJobs())[0].spans_dropped, 0);
  BatchBuilder builder("agent-2");
  const int p0 =
      builder.DeclareProcess({"job-a", "host-0", 0, 0, 100, 0, /*dropped=*/9});
  builder.AddSpan(builder.DeclareTrack(p0, v1::TRACK_KIND_THREAD, 1, "main"),
                  v1::CATEGORY_USER, "step", kT, 10);
  v1::Batch later = builder.Take();
  ASSERT_TRUE((*store)->Write({&later}).ok());
  EXPECT_EQ((*(*store)->ListJobs())[0].spans_dropped, 9);
}

// A job of imported statistics has no span end: retention ages it by its
// last write.
TEST_P(StoreTest, RetentionAgesAJobOfStatisticsByItsLastWrite) {
  const std::string path = Location("stats-only.db");
  auto store = Store::Open(path);
  std::vector<v1::Batch> batches = {TotalsBatch("import-1", 1, "job-t", 0, 4)};
  const int64_t before = absl::ToUnixNanos(absl::Now());
  ASSERT_TRUE((*store)->Write({&batches[0]}).ok());
  const int64_t after = absl::ToUnixNanos(absl::Now());
  const JobInfo job = (*(*store)->ListJobs())[0];
  EXPECT_EQ(job.spans, 0);
  EXPECT_GE(job.written_ns, before);
  EXPECT_LE(job.written_ns, after);
  EXPECT_TRUE((*store)->DeleteJobsEndedBefore(before)->empty());
  EXPECT_EQ(*(*store)->DeleteJobsEndedBefore(after + 1),
            std::vector<std::string>{"job-t"});
  EXPECT_TRUE((*store)->ListJobs()->empty());
}

TEST(SqliteStoreTest, RefusesAnOlderStoreWithAMessageAndLeavesItAlone) {
  const std::string path = TempPath("v2.db");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TABLE meta(key TEXT PRIMARY KEY, value) "
                         "WITHOUT ROWID;"
                         "INSERT INTO meta VALUES('schema_version', 2);"
                         "CREATE TABLE spans(job INTEGER, start INTEGER);"
                         "INSERT INTO spans VALUES(1, 2);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  const std::string message =
      path +
      " has store schema version 2 (one row per span, Meridian before "
      "chunked storage); this Meridian reads version 8. Read it with the "
      "Meridian that wrote it (meridian export), or give this collector a "
      "new --db file";
  EXPECT_EQ(Store::Open(path).status().message(), message);
  StoreOptions read_only;
  read_only.read_only = true;
  EXPECT_EQ(Store::Open(path, read_only).status().message(), message);
  // Nothing was added to it, and its rows are still there.
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT (SELECT count(*) FROM sqlite_master), "
                               "(SELECT count(*) FROM spans)",
                               -1, &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), 2);  // meta, spans
  EXPECT_EQ(sqlite3_column_int(stmt, 1), 1);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

// Spans sent as a wire chunk are stored exactly as the same spans sent as
// messages: the store translates the batch's ids into its own.
TEST_P(StoreTest, AWireChunkReadsBackLikeTheSameSpansAsMessages) {
  std::vector<v1::Batch> messages = TwoBatches();
  std::vector<v1::Batch> chunked;
  for (v1::Batch& batch : TwoBatches()) {
    batch.set_agent_id("agent-chunked");
    chunked.push_back(ToChunks(std::move(batch)));
    ASSERT_EQ(chunked.back().spans_size(), 0);
  }
  auto read = [this](std::vector<v1::Batch>& batches, const std::string& name) {
    auto store = Store::Open(Location(name));
    EXPECT_TRUE(store.ok());
    auto results = (*store)->Write({&batches[0], &batches[1]});
    EXPECT_TRUE(results.ok()) << results.status();
    EXPECT_EQ((*results)[1].spans_stored, 2);
    auto catalog = (*store)->LoadCatalog("job-a");
    EXPECT_TRUE(catalog.ok());
    EXPECT_EQ(catalog->job.spans, 3);
    return ScanAll(**store, catalog->job);
  };
  std::vector<StoredSpan> a = read(messages, "messages.db");
  std::vector<StoredSpan> b = read(chunked, "chunked.db");
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 3u);
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(a[i].start_ns, b[i].start_ns);
    EXPECT_EQ(a[i].dur_ns, b[i].dur_ns);
    EXPECT_EQ(a[i].track_id, b[i].track_id);
    EXPECT_EQ(a[i].op_id, b[i].op_id);
    EXPECT_EQ(a[i].peer, b[i].peer);
    EXPECT_EQ(a[i].seq, b[i].seq);
    EXPECT_EQ(a[i].step, b[i].step);
    EXPECT_EQ(a[i].partition, b[i].partition);
    EXPECT_EQ(a[i].comm, b[i].comm);
    EXPECT_EQ(a[i].value, b[i].value);
    ASSERT_EQ(a[i].args.size(), b[i].args.size());
    for (size_t j = 0; j < a[i].args.size(); ++j) {
      EXPECT_EQ(a[i].args[j].key, b[i].args[j].key);
      EXPECT_EQ(a[i].args[j].str, b[i].args[j].str);
      EXPECT_EQ(a[i].args[j].int_value, b[i].args[j].int_value);
    }
  }
}

// Chunks of two tracks and of two drains of one track overlap in time (a
// step ends, and so is recorded, after its phases): the scan still returns
// one time order, ties by track then arrival.
TEST_P(StoreTest, MergesOverlappingChunksInTimeOrder) {
  auto store = Store::Open(Location("merge.db"));
  ASSERT_TRUE(store.ok());
  BatchBuilder builder("agent");
  int p = builder.DeclareProcess({"job", "h", 0, 0, 1});
  int t1 = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  int t2 = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 2, "comm");
  builder.AddSpan(t1, v1::CATEGORY_USER, "forward", kT + 10, 5);
  builder.AddSpan(t1, v1::CATEGORY_USER, "backward", kT + 30, 5);
  builder.AddSpan(t2, v1::CATEGORY_MPI, "MPI_Allreduce", kT + 20, 5);
  builder.AddSpan(t2, v1::CATEGORY_MPI, "MPI_Allreduce", kT + 30, 5);
  v1::Batch first = builder.Take();
  builder.AddSpan(t1, v1::CATEGORY_USER, "step", kT, 100);  // ends last
  builder.AddSpan(t1, v1::CATEGORY_USER, "optimizer", kT + 50, 5);
  v1::Batch second = builder.Take();
  {
    auto w = (*store)->Write({&first});
    ASSERT_TRUE(w.ok()) << w.status();
  }
  ASSERT_TRUE((*store)->Write({&second}).ok());
  auto catalog = (*store)->LoadCatalog("job");
  ASSERT_TRUE(catalog.ok());
  EXPECT_EQ(catalog->job.chunks, 3);
  std::vector<int64_t> starts, durs;
  for (const StoredSpan& s : ScanAll(**store, catalog->job)) {
    starts.push_back(s.start_ns - kT);
    durs.push_back(s.dur_ns);
  }
  EXPECT_EQ(starts, (std::vector<int64_t>{0, 10, 20, 30, 30, 50}));
  EXPECT_EQ(durs, (std::vector<int64_t>{100, 5, 5, 5, 5, 5}));
}

// A scan reads only the chunks whose bounds meet its range: by track, step
// or time; the others are not even decompressed.
TEST_P(StoreTest, ReadsOnlyTheChunksARangeCanNeed) {
  auto store = Store::Open(Location("skip.db"));
  ASSERT_TRUE(store.ok());
  BatchBuilder builder("agent");
  int p = builder.DeclareProcess({"job", "h", 0, 0, 1});
  int t1 = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  int t2 = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 2, "comm");
  std::vector<v1::Batch> batches;
  for (int step = 0; step < 10; ++step) {  // one batch (drain) per step
    for (int t : {t1, t2}) {
      builder.AddSpan(t, v1::CATEGORY_USER, "work", kT + step * 1000, 900)
          ->set_step(step);
    }
    batches.push_back(builder.Take());
  }
  for (v1::Batch& b : batches) ASSERT_TRUE((*store)->Write({&b}).ok());
  auto catalog = (*store)->LoadCatalog("job");
  ASSERT_TRUE(catalog.ok());
  EXPECT_EQ(catalog->job.chunks, 20);
  auto count = [&](const ScanRange& range, int64_t* chunks) {
    ScanStats stats;
    int64_t spans = 0;
    absl::Status status = (*store)->Scan(
        catalog->job, range,
        [&](const StoredSpan&) {
          ++spans;
          return true;
        },
        &stats);
    EXPECT_TRUE(status.ok()) << status;
    *chunks = stats.chunks_read;
    return spans;
  };
  int64_t chunks = 0;
  ScanRange step;
  step.first_step = 4;
  step.last_step = 4;
  EXPECT_EQ(count(step, &chunks), 2);
  EXPECT_EQ(chunks, 2);
  ScanRange one_track;
  one_track.tracks.emplace();
  one_track.tracks->insert(catalog->tracks[0].id);
  EXPECT_EQ(count(one_track, &chunks), 10);
  EXPECT_EQ(chunks, 10);
  ScanRange window;
  window.from_ns = 7950;  // step 7 ends at 7900: out
  window.to_ns = 9000;    // step 9 starts at 9000: out
  EXPECT_EQ(count(window, &chunks), 2);
  EXPECT_EQ(chunks, 2);
}

// One thread ring's records as a wire chunk: record i starts at kT + i.
v1::Batch RingBatch(const std::string& agent, uint64_t first, uint64_t end) {
  BatchBuilder builder(agent);
  int p = builder.DeclareProcess({"job", "h", 0, 0, 1});
  builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
  builder.AddSpan(0, v1::CATEGORY_USER, "x", kT, 0);  // declares strings
  v1::Batch batch = builder.Take();
  batch.clear_spans();
  SpanColumns c;
  for (uint64_t r = first; r < end; ++r) {
    c.Add(kT + static_cast<int64_t>(r), 1, 1, v1::CATEGORY_USER, 0);
    c.record.back() = r;
  }
  v1::RingRange* range = batch.add_rings();
  range->set_incarnation(0xabcdef0123456789ULL);
  range->set_ring(2);
  range->set_begin(first);
  range->set_end(end);
  v1::SpanChunk* chunk = batch.add_chunks();
  chunk->set_track(0);
  chunk->set_ring(1);
  chunk->set_count(c.size());
  chunk->set_first_start_ns(c.start_ns.front());
  chunk->set_data(*EncodeSpanChunk(c));
  return batch;
}

// An agent killed after the collector stored a batch, but before it freed
// the batch's records in the ring, leaves them for its successor, which
// reads them again with others: the records stored already are not stored
// twice, the rest are.
TEST_P(StoreTest, RingRecordsStoredBeforeAreNotStoredTwice) {
  auto store = Store::Open(Location("rings.db"));
  ASSERT_TRUE(store.ok());
  v1::Batch first = RingBatch("agent-1", 0, 3);
  v1::Batch again = RingBatch("agent-2", 1, 5);  // the successor's read
  v1::Batch old = RingBatch("agent-3", 0, 2);    // wholly stored
  auto results = (*store)->Write({&first});
  ASSERT_TRUE(results.ok()) << results.status();
  results = (*store)->Write({&again, &old});
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ((*results)[0].spans_stored, 2);
  EXPECT_EQ((*results)[1].spans_stored, 0);
  auto catalog = (*store)->LoadCatalog("job");
  ASSERT_TRUE(catalog.ok());
  EXPECT_EQ(catalog->job.spans, 5);
  std::vector<int64_t> starts;
  for (const StoredSpan& s : ScanAll(**store, catalog->job)) {
    starts.push_back(s.start_ns - kT);
  }
  EXPECT_EQ(starts, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

// A stored chunk that does not decode (a damaged file) fails the scan with
// DATA_LOSS naming the chunk; nothing is invented.
TEST(SqliteStoreTest, ADamagedChunkIsDataLossNamingIt) {
  const std::string path = TempPath("damaged.db");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok());
    std::vector<v1::Batch> batches = TwoBatches();
    ASSERT_TRUE((*store)->Write({&batches[0], &batches[1]}).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE chunks SET data=x'01ff00' WHERE id=1",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  auto catalog = (*store)->LoadCatalog("job-a");
  ASSERT_TRUE(catalog.ok());
  absl::Status status =
      (*store)->Scan(catalog->job, {}, [](const StoredSpan&) { return true; });
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(status.message(),
            "store " + path +
                ": chunk 1: span chunk: not a zstd frame with a known size");
}

// Exactly once without transactions: an attempt that dies between its
// chunks and its commit record is never read, and the resent batches are
// stored once, none as duplicate; a second attempt of a committed batch is
// a duplicate.
TEST(ClickHouseStoreTest, AnAttemptThatDiesBeforeItsCommitIsNeverRead) {
  auto location = NewStoreLocation(StoreKind::kClickHouse, "uncommitted");
  if (absl::IsFailedPrecondition(location.status())) {
    GTEST_SKIP() << location.status().message();
  }
  ASSERT_TRUE(location.ok()) << location.status();
  auto store = ClickHouseStore::Open(*location);
  ASSERT_TRUE(store.ok()) << store.status();
  std::vector<v1::Batch> batches = TwoBatches();
  for (v1::Batch& b : batches) b.set_agent_id("agent 'quoted' \\ one");
  ASSERT_TRUE((*store)->Write({&batches[0]}).ok());
  (*store)->set_before_commit_for_testing(
      [] { return absl::UnavailableError("collector killed"); });
  auto died = (*store)->Write({&batches[1]});
  EXPECT_EQ(died.status().message(), "collector killed");
  auto catalog = (*store)->LoadCatalog("job-a");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(catalog->job.spans, 1);
  EXPECT_EQ(catalog->job.chunks, 1);
  EXPECT_EQ(ScanAll(**store, catalog->job).size(), 1u);

  // The resend, through another store (another collector).
  auto other = ClickHouseStore::Open(*location);
  ASSERT_TRUE(other.ok());
  auto resent = (*other)->Write({&batches[1], &batches[0]});
  ASSERT_TRUE(resent.ok()) << resent.status();
  EXPECT_FALSE((*resent)[0].duplicate);
  EXPECT_TRUE((*resent)[1].duplicate);
  catalog = (*other)->LoadCatalog("job-a");
  ASSERT_TRUE(catalog.ok());
  EXPECT_EQ(catalog->job.spans, 3);
  EXPECT_EQ(catalog->job.chunks, 2);
  std::vector<StoredSpan> spans = ScanAll(**other, catalog->job);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].start_ns, kT);
  EXPECT_EQ(spans[2].value, 0.25);
}

TEST(ClickHouseLocationTest, ParsesLocationsAndRefusesCredentialsInThem) {
  unsetenv("MERIDIAN_CLICKHOUSE_CREDENTIALS");
  setenv("MERIDIAN_CLICKHOUSE_USER", "alice", 1);
  setenv("MERIDIAN_CLICKHOUSE_PASSWORD", "s3cret", 1);
  auto endpoint = ParseClickHouseLocation("clickhouse://ch-1.site:9123/traces");
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  EXPECT_EQ(endpoint->host, "ch-1.site");
  EXPECT_EQ(endpoint->port, 9123);
  EXPECT_EQ(endpoint->database, "traces");
  EXPECT_EQ(endpoint->user, "alice");
  EXPECT_EQ(endpoint->password, "s3cret");
  endpoint = ParseClickHouseLocation("clickhouse://head");
  ASSERT_TRUE(endpoint.ok());
  EXPECT_EQ(endpoint->port, 8123);
  EXPECT_EQ(endpoint->database, "meridian");

  EXPECT_TRUE(absl::StartsWith(
      ParseClickHouseLocation("clickhouse://bob:pw@head:8123/db")
          .status()
          .message(),
      "a ClickHouse store's location carries no user or password"));
  EXPECT_EQ(
      ParseClickHouseLocation("clickhouse://head:99999/db").status().message(),
      "ClickHouse port \"99999\" is not 1 to 65535");
  EXPECT_EQ(ParseClickHouseLocation("clickhouse://head/x;DROP TABLE chunks")
                .status()
                .message(),
            "ClickHouse database \"x;DROP TABLE chunks\": letters, digits "
            "and _ only, at most 64");
  unsetenv("MERIDIAN_CLICKHOUSE_USER");
  unsetenv("MERIDIAN_CLICKHOUSE_PASSWORD");
}

TEST(ClickHouseLocationTest, ReadsAClusterLayoutAfterTheAddress) {
  ClickHouseLayout layout;
  auto endpoint = ParseClickHouseLocation(
      "clickhouse://head:9000/traces?cluster=ring&shards=local_traces",
      &layout);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  EXPECT_EQ(endpoint->host, "head");
  EXPECT_EQ(endpoint->port, 9000);
  EXPECT_EQ(endpoint->database, "traces");
  EXPECT_EQ(layout.cluster, "ring");
  EXPECT_EQ(layout.shards, "local_traces");
  EXPECT_EQ(ParseClickHouseLocation("clickhouse://head/db?cluster=ring")
                .status()
                .message(),
            "ClickHouse location: cluster= and shards= go together");
  EXPECT_EQ(ParseClickHouseLocation("clickhouse://head/db?color=red")
                .status()
                .message(),
            "ClickHouse location: unknown parameter \"color\" "
            "(cluster=NAME&shards=DATABASE make a Distributed store)");
  EXPECT_EQ(ParseClickHouseLocation("clickhouse://head/db?cluster=a;b")
                .status()
                .message(),
            "ClickHouse location: \"cluster=a;b\": cluster=NAME and "
            "shards=DATABASE, names of letters, digits and _");
  EXPECT_EQ(ParseClickHouseLocation("clickhouse://:9000/db").status().message(),
            "ClickHouse host \"\" is not a name");
}

TEST(ClickHouseLocationTest, ReadsCredentialsFromAPrivateFileOnly) {
  const std::string file = TempPath("clickhouse-credentials");
  {
    std::ofstream out(file);
    out << "meridian:pa:ss\n";
  }
  chmod(file.c_str(), 0600);
  setenv("MERIDIAN_CLICKHOUSE_CREDENTIALS", file.c_str(), 1);
  auto endpoint = ParseClickHouseLocation("clickhouse://head/db");
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  EXPECT_EQ(endpoint->user, "meridian");
  EXPECT_EQ(endpoint->password, "pa:ss");
  chmod(file.c_str(), 0644);
  EXPECT_EQ(ParseClickHouseLocation("clickhouse://head/db").status().message(),
            "MERIDIAN_CLICKHOUSE_CREDENTIALS: \"" + file +
                "\" may be read by other users (chmod 600 it)");
  unsetenv("MERIDIAN_CLICKHOUSE_CREDENTIALS");
}

// The Distributed layout spreads jobs over the shards, each job whole on
// one, and reads them all back through the first.
TEST(ClickHouseStoreTest, ADistributedStoreShardsByJob) {
  auto location =
      NewStoreLocation(StoreKind::kClickHouseDistributed, "sharded");
  if (absl::IsFailedPrecondition(location.status())) {
    GTEST_SKIP() << location.status().message();
  }
  ASSERT_TRUE(location.ok()) << location.status();
  auto store = Store::Open(*location);
  ASSERT_TRUE(store.ok()) << store.status();
  std::vector<v1::Batch> batches;
  for (int j = 0; j < 8; ++j) {
    BatchBuilder builder("agent-" + std::to_string(j));
    int p = builder.DeclareProcess({"job-" + std::to_string(j), "h", 0, 0, 1});
    int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 1, "main");
    for (int i = 0; i <= j; ++i) {
      builder.AddSpan(t, v1::CATEGORY_USER, "x", kT + i, 1);
    }
    batches.push_back(builder.Take());
  }
  std::vector<const v1::Batch*> all;
  for (const v1::Batch& b : batches) all.push_back(&b);
  ASSERT_TRUE((*store)->Write(all).ok());
  auto jobs = (*store)->ListJobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 8u);
  for (int j = 0; j < 8; ++j) EXPECT_EQ((*jobs)[j].spans, j + 1);

  // Each shard's own tables: every job on exactly one, both shards used.
  auto cluster = TestClickHouseCluster();
  ASSERT_TRUE(cluster.ok());
  const std::string shards = location->substr(location->find("shards=") + 7);
  int64_t total = 0;
  std::set<std::string> seen;
  for (ClickHouseServer* server : {cluster->first, cluster->second}) {
    ClickHouseEndpoint endpoint = server->endpoint();
    endpoint.database = shards;
    auto client = ClickHouseClient::Connect(endpoint);
    ASSERT_TRUE(client.ok());
    auto rows = (*client)->Query(
        "SELECT job_name, sum(spans) FROM batches GROUP BY job_name "
        "ORDER BY job_name FORMAT TabSeparated");
    ASSERT_TRUE(rows.ok()) << rows.status();
    int jobs_here = 0;
    for (absl::string_view line :
         absl::StrSplit(*rows, '\n', absl::SkipEmpty())) {
      std::vector<std::string> fields = absl::StrSplit(line, '\t');
      ASSERT_EQ(fields.size(), 2u);
      EXPECT_TRUE(seen.insert(fields[0]).second) << fields[0] << " twice";
      total += std::stoll(fields[1]);
      ++jobs_here;
    }
    EXPECT_GT(jobs_here, 0) << "a shard holds no job";
  }
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ(total, 36);
}

}  // namespace
}  // namespace meridian
