#include "store/store_copy.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "testing/test_store.h"
#include "wire/batch_builder.h"

namespace meridian {
namespace {

constexpr int64_t kT = 1700000000000000000;

// Everything a query can read of a store, by names (ids differ between
// stores), spans sorted.
std::string Dump(Store& store) {
  std::string out;
  EXPECT_TRUE(store.BeginSnapshot().ok());
  auto jobs = store.ListJobs();
  EXPECT_TRUE(jobs.ok()) << jobs.status();
  if (!jobs.ok()) return "";
  for (const JobInfo& j : *jobs) {
    auto catalog = store.LoadCatalog(j.name);
    EXPECT_TRUE(catalog.ok()) << catalog.status();
    if (!catalog.ok()) return "";
    absl::StrAppend(&out, "job ", j.name, " spans ", j.spans, " ranks ",
                    j.ranks, " nodes ", j.nodes, " world ", j.world_size,
                    " first ", j.spans ? j.min_start_ns : 0, " last ",
                    j.spans ? j.max_end_ns : 0, " longest ", j.max_dur_ns,
                    "\n");
    std::map<int64_t, std::string> process, track;
    std::vector<std::string> lines;
    for (const ProcessInfo& p : catalog->processes) {
      process[p.id] =
          absl::StrCat(p.node, "/", p.rank, "/", p.local_rank, "/", p.pid);
      lines.push_back("process " + process[p.id]);
    }
    for (const TrackInfo& t : catalog->tracks) {
      track[t.id] =
          absl::StrCat(process[t.process_id], ":", t.kind, ":", t.ext_id);
      lines.push_back(absl::StrCat("track ", track[t.id], " ", t.name));
    }
    std::map<int64_t, std::string> op;
    for (const OpInfo& o : catalog->ops) {
      op[o.id] = absl::StrCat(o.category, ":", o.name);
    }
    EXPECT_TRUE(
        store
            .Scan(catalog->job, {},
                  [&](const StoredSpan& s) {
                    std::string line = absl::StrCat(
                        "span ", s.start_ns, " ", s.dur_ns, " ",
                        track[s.track_id], " ", op[s.op_id], " ", s.bytes, " ",
                        s.peer.value_or(-9), " ", s.tag.value_or(-9), " ",
                        s.comm, " ", s.comm_size, " ", s.seq.value_or(9), " ",
                        s.step.value_or(-9), " ", s.partition.value_or(-9), " ",
                        s.correlation, " ", s.kind, " ", s.value);
                    for (const StoredArg& a : s.args) {
                      absl::StrAppend(&line, " ", a.key, "=",
                                      static_cast<int>(a.type), ":", a.str,
                                      a.int_value, "/", a.real_value);
                    }
                    lines.push_back(line);
                    return true;
                  })
            .ok());
    for (const ProcessInfo& p : catalog->processes) {
      auto models = store.LoadClockModels(p.node, j.id);
      EXPECT_TRUE(models.ok());
      for (const NodeClockModel& m : *models) {
        lines.push_back(absl::StrCat("clock ", p.node, " ", m.reference_ns, " ",
                                     m.offset_ns, " ", m.drift_ppb, " ",
                                     m.uncertainty_ns));
      }
    }
    auto totals = store.LoadTotals(j.id);
    EXPECT_TRUE(totals.ok());
    for (const StoredOpTotals& t : totals->ops) {
      std::string line =
          absl::StrCat("op-totals ", process[t.process_id], " ", op[t.op_id],
                       " ", t.calls, " ", t.bytes, " ", t.dur_ns);
      for (const auto& s : t.sizes) {
        absl::StrAppend(&line, " [", s.log2, " ", s.calls, " ", s.bytes, " ",
                        s.dur_ns, "]");
      }
      lines.push_back(line);
    }
    for (const StoredProcessTotals& t : totals->processes) {
      lines.push_back(absl::StrCat(
          "process-totals ", process[t.process_id], " ", t.comm_ns, " ",
          t.elapsed_ns, " ", t.source, " ", t.user_ns.value_or(-1), " ",
          t.system_ns.value_or(-1), " ", t.max_rss_bytes.value_or(-1), " ",
          t.context_switches.value_or(-1)));
    }
    std::sort(lines.begin(), lines.end());
    lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
    absl::StrAppend(&out, absl::StrJoin(lines, "\n"), "\n");
  }
  return out;
}

// A job of every kind of span field, on two nodes with clock models, and a
// job of imported statistics.
void Fill(Store& store) {
  BatchBuilder builder("agent-1");
  int p0 = builder.DeclareProcess({"job-a", "host-0", 0, 0, 100, 2});
  int p1 = builder.DeclareProcess({"job-a", "host-1", 1, 0, 101, 2});
  int t0 = builder.DeclareTrack(p0, v1::TRACK_KIND_THREAD, 1, "main");
  int t1 = builder.DeclareTrack(p1, v1::TRACK_KIND_GPU_STREAM, 7, "stream 7");
  std::vector<v1::Batch> batches;
  for (int i = 0; i < 30000; ++i) {  // more than one copied batch
    v1::Span* s = builder.AddSpan(i % 2 ? t1 : t0, v1::CATEGORY_MPI,
                                  i % 3 ? "MPI_Allreduce" : "say 'hi'\n",
                                  kT + i * 100, 90);
    s->set_bytes(i);
    s->set_step(i / 1000);
    if (i % 5 == 0) {
      s->set_peer(1);
      s->set_tag(-3);
      s->set_seq(i);
      s->set_partition(2);
      s->set_comm(0xfedcba9876543210ULL);
      s->set_comm_size(2);
      s->set_correlation(77);
      v1::Arg* arg = s->add_args();
      arg->set_key(builder.String("note"));
      arg->set_str(builder.String("a\tb"));
      arg = s->add_args();
      arg->set_key(builder.String("x"));
      arg->set_real(0.5);
    }
    if (builder.spans() == 7000) batches.push_back(builder.Take());
  }
  v1::Span* counter = builder.AddSpan(t0, v1::CATEGORY_USER, "loss", kT, 0);
  counter->set_kind(v1::SPAN_KIND_COUNTER);
  counter->set_value(0.25);
  batches.push_back(builder.Take());
  for (int node = 0; node < 2; ++node) {
    BatchBuilder clock_builder("agent-clock-" + std::to_string(node));
    const int p = clock_builder.DeclareProcess(
        {"job-a", "host-" + std::to_string(node), node, 0, 100 + node, 2});
    const int t = clock_builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 99, "");
    clock_builder.AddSpan(t, v1::CATEGORY_USER, "tick", kT + 5, 1);
    const uint32_t node_index =
        clock_builder.String("host-" + std::to_string(node));
    v1::Batch batch = clock_builder.Take();
    batch.mutable_clock()->set_node(node_index);
    batch.mutable_clock()->set_reference_ns(kT + 1000 * node);
    batch.mutable_clock()->set_offset_ns(-500 + node);
    batch.mutable_clock()->set_drift_ppb(-250);
    batch.mutable_clock()->set_uncertainty_ns(40);
    batches.push_back(std::move(batch));
  }
  BatchBuilder totals("import");
  const int p = totals.DeclareProcess({"job-t", "host-0", 3, -1, 0});
  v1::ImportedOpTotals* op =
      totals.AddOpTotals(p, v1::CATEGORY_MPI, "MPI_Send");
  op->set_calls(4);
  op->set_bytes(32);
  op->set_dur_ns(4000);
  v1::ImportedSizeTotals* size = op->add_sizes();
  size->set_log2(3);
  size->set_calls(4);
  size->set_bytes(32);
  size->set_dur_ns(4000);
  v1::ImportedProcessTotals* pt = totals.AddProcessTotals(p, "mpitrace");
  pt->set_comm_ns(4000);
  pt->set_elapsed_ns(5000000);
  pt->set_user_ns(8000);
  batches.push_back(totals.Take());
  std::vector<const v1::Batch*> all;
  for (const v1::Batch& b : batches) all.push_back(&b);
  auto written = store.Write(all);
  ASSERT_TRUE(written.ok()) << written.status();
}

class StoreCopyTest : public ::testing::TestWithParam<StoreKind> {};

// A SQLite store copied into each store reads back the same, and a second
// copy stores nothing twice.
TEST_P(StoreCopyTest, CopiesEverythingOnceFromSqlite) {
  auto to_location = NewStoreLocation(GetParam(), "copy-to");
  if (absl::IsFailedPrecondition(to_location.status())) {
    GTEST_SKIP() << to_location.status().message();
  }
  ASSERT_TRUE(to_location.ok()) << to_location.status();
  auto from_location = NewStoreLocation(StoreKind::kSqlite, "copy-from.db");
  auto from = Store::Open(*from_location);
  ASSERT_TRUE(from.ok()) << from.status();
  Fill(**from);
  auto to = Store::Open(*to_location);
  ASSERT_TRUE(to.ok()) << to.status();

  std::vector<std::string> progress;
  auto report = CopyStore(**from, **to, [&](const std::string& job, int64_t n) {
    progress.push_back(absl::StrCat(job, " ", n));
  });
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->jobs, 2);
  EXPECT_EQ(report->spans, 30003);
  EXPECT_EQ(report->duplicates, 0);
  EXPECT_EQ(progress, (std::vector<std::string>{"job-a 30003", "job-t 0"}));

  // Fresh stores read: each takes its own snapshot.
  auto reader = Store::Open(*to_location);
  ASSERT_TRUE(reader.ok());
  const std::string source = Dump(**Store::Open(*from_location));
  EXPECT_EQ(Dump(**reader), source);
  EXPECT_NE(source.find("job job-a spans 30003 ranks 2 nodes 2 world 2"),
            std::string::npos)
      << source;
  EXPECT_NE(source.find("clock host-1 1700000000000001000 -499 -250 40"),
            std::string::npos);
  EXPECT_NE(source.find("op-totals host-0/3/-1/0 1:MPI_Send 4 32 4000 [3 4 "
                        "32 4000]"),
            std::string::npos)
      << source;

  // Again: every batch a duplicate, nothing stored twice.
  auto again = CopyStore(**Store::Open(*from_location), **to);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->spans, 0);
  EXPECT_EQ(again->duplicates, again->batches);
  EXPECT_EQ(again->batches, report->batches);
  auto later = Store::Open(*to_location);
  EXPECT_EQ(Dump(**later), source);
}

// A copy of the jobs `which` picks, refused whole above max_spans, and
// stopped where `check` says.
TEST(StoreCopyBoundsTest, CopiesWhatItsBoundsLet) {
  const auto from_location = NewStoreLocation(StoreKind::kSqlite, "b-from.db");
  auto from = Store::Open(*from_location);
  ASSERT_TRUE(from.ok()) << from.status();
  Fill(**from);
  auto to = Store::Open(*NewStoreLocation(StoreKind::kSqlite, "b-to.db"));
  ASSERT_TRUE(to.ok()) << to.status();

  CopyBounds bounds;
  bounds.which = [](const std::string& job) { return job == "job-t"; };
  auto report = CopyStore(**from, **to, nullptr, bounds);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->jobs, 1);
  EXPECT_EQ(report->spans, 0);

  // One job by name, not listed with the others; one that is not there:
  // nothing.
  bounds.which = nullptr;
  bounds.only = "job-t";
  from = Store::Open(*from_location);
  report = CopyStore(**from, **to, nullptr, bounds);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->jobs, 1);
  EXPECT_EQ(report->duplicates, report->batches);  // copied above
  bounds.only = "absent";
  from = Store::Open(*from_location);
  report = CopyStore(**from, **to, nullptr, bounds);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->jobs, 0);

  bounds.only.reset();
  bounds.max_spans = 30002;
  from = Store::Open(*from_location);  // a copy reads in a snapshot of its own
  report = CopyStore(**from, **to, nullptr, bounds);
  EXPECT_EQ(report.status(),
            absl::ResourceExhaustedError("job job-a has 30003 spans, more "
                                         "than the copy's bound of 30002"));
  int checks = 0;
  bounds.max_spans = 30003;
  bounds.check = [&checks] {
    return ++checks == 2 ? absl::CancelledError("enough") : absl::OkStatus();
  };
  from = Store::Open(*from_location);
  report = CopyStore(**from, **to, nullptr, bounds);
  // Before the job, then before its first node's clock models.
  EXPECT_EQ(report.status(), absl::CancelledError("copying job job-a: enough"));
  EXPECT_EQ(checks, 2);

  ASSERT_TRUE((*to)->BeginSnapshot().ok());
  auto jobs = (*to)->ListJobs();
  ASSERT_TRUE(jobs.ok());
  std::vector<std::string> names;
  for (const JobInfo& j : *jobs) names.push_back(j.name);
  // The stopped job's batches were still held (written 8 at a time): none
  // of job-a went in.
  EXPECT_EQ(names, (std::vector<std::string>{"job-t"}));
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreCopyTest, AllStoreKinds(), StoreKindName);

}  // namespace
}  // namespace meridian
