// A job's clock solution stored and read back (JobClocks::Load with a
// StoredJobResult), on both stores.
#include "query/clocks/job_clocks.h"

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "testing/scenario_fixture.h"
#include "testing/synthetic_job.h"
#include "testing/test_store.h"
#include "wire/batch_builder.h"

namespace meridian {
namespace {

// Every span's placement and the report, as one text.
std::string Placed(Store& store, const JobCatalog& catalog,
                   const JobClocks& clocks) {
  std::string out;
  EXPECT_TRUE(store
                  .Scan(catalog.job, {},
                        [&](const StoredSpan& s) {
                          const JobClocks::Interval i = clocks.Place(s);
                          out += std::to_string(i.start_ns) + "+" +
                                 std::to_string(i.dur_ns) + "\n";
                          return true;
                        })
                  .ok());
  v1::ClocksReply report = clocks.Report();
  report.clear_solved_ns();
  report.clear_stored();
  return out + report.DebugString() + std::to_string(clocks.epoch_ns());
}

TEST(JobClocksTest, AStoredSolutionGivesTheSameClocksWithoutSolving) {
  auto f = ScenarioFixture::Load("late-every-other-step");
  ASSERT_NE(f, nullptr);
  Store& store = *f->store;
  auto solved = JobClocks::Load(store, f->catalog);
  ASSERT_TRUE(solved.ok()) << solved.status();
  EXPECT_FALSE(solved->from_stored());
  ASSERT_TRUE(solved->new_solution().has_value());
  const StoredJobResult solution = *solved->new_solution();
  EXPECT_EQ(solution.spans, f->catalog.job.spans);
  EXPECT_EQ(solution.written_ns, f->catalog.job.written_ns);

  // Through the store and back.
  absl::Status saved = store.SaveClockSolution(f->catalog.job.id, solution);
  ASSERT_TRUE(saved.ok()) << saved;
  auto loaded = store.LoadClockSolution(f->catalog.job.id);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_TRUE(loaded->has_value());
  EXPECT_EQ((*loaded)->data, solution.data);
  EXPECT_EQ((*loaded)->spans, solution.spans);

  auto reused =
      JobClocks::Load(store, f->catalog, nullptr, JobRead{}, &*loaded);
  ASSERT_TRUE(reused.ok());
  EXPECT_TRUE(reused->from_stored());
  EXPECT_FALSE(reused->new_solution().has_value());
  EXPECT_TRUE(reused->Report().stored());
  EXPECT_EQ(Placed(store, f->catalog, *reused),
            Placed(store, f->catalog, *solved));
}

TEST(JobClocksTest, AStaleOrDamagedSolutionIsSolvedAgain) {
  auto f = ScenarioFixture::Load("slow-rank");
  ASSERT_NE(f, nullptr);
  Store& store = *f->store;
  auto solved = JobClocks::Load(store, f->catalog);
  ASSERT_TRUE(solved.ok());
  const StoredJobResult good = *solved->new_solution();
  std::vector<std::optional<StoredJobResult>> bad(4, good);
  bad[0]->spans += 1;                             // the job has more spans now
  bad[1]->written_ns += 1;                        // written to since
  bad[2]->models += 1;                            // a clock model arrived
  bad[3]->data = "meridian-clocks 1\nepoch x\n";  // damaged
  for (size_t i = 0; i < bad.size(); ++i) {
    auto again =
        JobClocks::Load(store, f->catalog, nullptr, JobRead{}, &bad[i]);
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->from_stored()) << i;
    EXPECT_TRUE(again->new_solution().has_value()) << i;
  }
  // A window of the job as it stands is placed by the job's solution,
  // nothing solved; with a stale one it is refined over its own spans,
  // and that refinement is not the job's: not offered to store.
  JobRead window;
  window.ranges[0].first_step = 1;
  window.ranges[0].last_step = 1;
  ScanStats window_read;
  window.stats = &window_read;
  int64_t visited = 0;
  const std::optional<StoredJobResult> stored = good;
  auto step = JobClocks::Load(
      store, f->catalog, [&](const StoredSpan&) { ++visited; }, window,
      &stored);
  ASSERT_TRUE(step.ok());
  EXPECT_TRUE(step->from_stored());
  EXPECT_FALSE(step->new_solution().has_value());
  EXPECT_EQ(Placed(store, f->catalog, *step),
            Placed(store, f->catalog, *solved));
  int64_t in_step = 0;  // the window's spans, and only those, visited
  ASSERT_TRUE(store
                  .Scan(f->catalog.job, window.ranges[0],
                        [&](const StoredSpan&) { return ++in_step > 0; })
                  .ok());
  EXPECT_GT(in_step, 0);
  EXPECT_EQ(visited, in_step);
  auto refined = JobClocks::Load(store, f->catalog, nullptr, window, &bad[1]);
  ASSERT_TRUE(refined.ok());
  EXPECT_FALSE(refined->from_stored());
  EXPECT_FALSE(refined->new_solution().has_value());
  // Deleting the job deletes its solution.
  ASSERT_TRUE(store.SaveClockSolution(f->catalog.job.id, good).ok());
  ASSERT_TRUE(store.DeleteJob(f->catalog.job.name).ok());
  auto gone = store.LoadClockSolution(f->catalog.job.id);
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(gone->has_value());
}

TEST(JobClocksTest, ASolveStopsOnceCancelled) {
  auto f = ScenarioFixture::Load("slow-rank");
  ASSERT_NE(f, nullptr);
  const std::atomic<bool> cancel{true};
  JobRead read;
  read.cancel = &cancel;
  ScanStats stats;
  read.stats = &stats;
  auto stopped = JobClocks::Load(*f->store, f->catalog, nullptr, read);
  EXPECT_EQ(stopped.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(stopped.status().message(),
            "solving job " + f->catalog.job.name + "'s clocks: stopped");
  // Stopped at its first span: the merge had opened the 4 chunks that
  // start with it (one a track), not the job's others.
  EXPECT_EQ(stats.chunks_read, 4);
  EXPECT_EQ(f->catalog.job.chunks, 8);
  // A stored solution of the job as it is needs no read: not stopped.
  auto solved = JobClocks::Load(*f->store, f->catalog);
  ASSERT_TRUE(solved.ok());
  const std::optional<StoredJobResult> stored = solved->new_solution();
  auto reused = JobClocks::Load(*f->store, f->catalog, nullptr, read, &stored);
  ASSERT_TRUE(reused.ok()) << reused.status();
  EXPECT_TRUE(reused->from_stored());
}

// A reader's view of the store now, as a query opens it, and the job's
// catalog.
std::unique_ptr<Store> Reader(const std::string& location,
                              JobCatalog* catalog) {
  StoreOptions options;
  options.read_only = true;
  options.write_mark_margin_ns = 0;  // exactly what was written since
  auto store = Store::Open(location, options);
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return nullptr;
  EXPECT_TRUE((*store)->BeginSnapshot().ok());
  auto loaded = (*store)->LoadCatalog("evidence");
  EXPECT_TRUE(loaded.ok()) << loaded.status();
  if (!loaded.ok()) return nullptr;
  *catalog = std::move(*loaded);
  return std::move(*store);
}

// What a whole-job solve (a scan of every span) stores.
std::string WholeSolve(Store& store, const JobCatalog& catalog) {
  auto solved = JobClocks::Load(store, catalog);
  EXPECT_TRUE(solved.ok()) << solved.status();
  if (!solved.ok() || !solved->new_solution()) return "";
  return solved->new_solution()->data;
}

// A new store that the evidence tests write the job "evidence" into, and
// its writer (null, with a failure reported, if it does not open).
struct EvidenceStore {
  std::string location;
  std::unique_ptr<Store> writer;
};
EvidenceStore NewEvidenceStore() {
  EvidenceStore out;
  auto location = NewStoreLocation(StoreKindFromEnvironment(), "evidence");
  EXPECT_TRUE(location.ok()) << location.status();
  if (!location.ok()) return out;
  out.location = *location;
  StoreOptions options;
  options.full_sync = false;
  auto opened = Store::Open(out.location, options);
  EXPECT_TRUE(opened.ok()) << opened.status();
  if (opened.ok()) out.writer = std::move(*opened);
  return out;
}

// The job they write: 8 ranks on 4 nodes, node n's clock 25 us x n ahead
// (more than the 8 B Allreduce's 20-27 us), batches of 40 spans.
SyntheticJob EvidenceJob(int steps) {
  SyntheticJob job;
  job.job = "evidence";
  job.ranks = 8;
  job.nodes = 4;
  job.steps = steps;
  job.spans_per_batch = 40;
  job.jitter_ns = 3000;
  job.node_skew_ns = 25000;
  return job;
}

TEST(JobClocksTest, UpdatesReadOnlyWhatWasWrittenSinceAndSolveAsTheWholeJob) {
  EvidenceStore evidence = NewEvidenceStore();
  ASSERT_NE(evidence.writer, nullptr);
  Store& writer = *evidence.writer;
  const SyntheticJob job = EvidenceJob(12);
  std::vector<std::vector<v1::Batch>> batches;
  for (int node = 0; node < job.nodes; ++node) {
    batches.push_back(SyntheticBatches(job, node));
    ASSERT_EQ(batches.back().size(), 4u);
  }
  auto write = [&](std::vector<std::pair<int, int>> which) {
    std::vector<const v1::Batch*> pointers;
    for (const auto& [node, i] : which) pointers.push_back(&batches[node][i]);
    ASSERT_TRUE(writer.Write(pointers).ok());
  };
  auto save = [&](const JobCatalog& catalog, const JobClocks& clocks) {
    ASSERT_TRUE(
        writer.SaveClockSolution(catalog.job.id, *clocks.new_solution()).ok());
  };
  ClockSolveState state;  // what the collector keeps between updates
  // Every node's first two batches, but node 1's first: sent late.
  write({{0, 0}, {0, 1}, {1, 1}, {2, 0}, {2, 1}, {3, 0}, {3, 1}});
  JobCatalog catalog;
  auto reader = Reader(evidence.location, &catalog);
  ASSERT_NE(reader, nullptr);
  ScanStats first_read;
  auto first = JobClocks::Update(*reader, catalog, nullptr, nullptr,
                                 &first_read, &state);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->from_stored());
  EXPECT_EQ(first_read.chunks_read, catalog.job.chunks);  // all, the first time
  auto mark = reader->WriteMark(catalog.job.id);
  ASSERT_TRUE(mark.ok());
  EXPECT_EQ(state.mark, *mark);
  EXPECT_EQ(state.full_solves, 1);
  EXPECT_EQ(first->new_solution()->data, WholeSolve(*reader, catalog));
  EXPECT_GT(first->evidence_spans(), 0);
  save(catalog, *first);

  // The rest, and node 1's late first batch (steps 0..2 of its ranks).
  const int64_t chunks_before = catalog.job.chunks;
  write(
      {{1, 0}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 2}, {2, 3}, {3, 2}, {3, 3}});
  reader = Reader(evidence.location, &catalog);
  ASSERT_NE(reader, nullptr);
  auto stored = reader->LoadClockSolution(catalog.job.id);
  ASSERT_TRUE(stored.ok());
  ScanStats second_read;
  auto second = JobClocks::Update(*reader, catalog, &*stored, nullptr,
                                  &second_read, &state);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->from_stored());  // the job has changed
  // With the kept state: only the chunks written since.
  EXPECT_EQ(state.incremental_updates, 1);
  EXPECT_EQ(second_read.chunks_read, catalog.job.chunks - chunks_before);
  const std::string whole = WholeSolve(*reader, catalog);
  EXPECT_EQ(second->new_solution()->data, whole);
  // Node n's clock is 25 us x n ahead: the refinement corrects it.
  EXPECT_TRUE(absl::StrContains(whole,
                                "refinement 200 56 0 1\nnote \n"
                                "node node-0 0\nnode node-1 -6075\n"
                                "node node-2 -30648\nnode node-3 -55812\n"))
      << whole;
  // The same spans as the whole job's refinement reads.
  ScanStats stateless_read;
  auto all =
      JobClocks::Update(*reader, catalog, nullptr, nullptr, &stateless_read);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(second->evidence_spans(), all->evidence_spans());
  // Without a kept state (a restarted collector): every chunk, read once.
  EXPECT_EQ(stateless_read.chunks_read, catalog.job.chunks);
  EXPECT_EQ(all->new_solution()->data, whole);
  save(catalog, *second);

  // The job as it stands: its stored solution, nothing read.
  reader = Reader(evidence.location, &catalog);
  ASSERT_NE(reader, nullptr);
  stored = reader->LoadClockSolution(catalog.job.id);
  ASSERT_TRUE(stored.ok());
  ScanStats third_read;
  auto third =
      JobClocks::Update(*reader, catalog, &*stored, nullptr, &third_read);
  ASSERT_TRUE(third.ok());
  EXPECT_TRUE(third->from_stored());
  EXPECT_EQ(third_read.chunks_read, 0);
}

// Updates with a ClockSolveState place and match only the evidence still
// open, and give the whole job's solution, byte for byte, after every part:
// as batches arrive in order, and when a node's batch comes late (before
// its node's horizon: the update solves from all the chunks then).
TEST(JobClocksTest, IncrementalUpdatesSettleWhatCannotChangeAndSolveAsWhole) {
  EvidenceStore evidence = NewEvidenceStore();
  ASSERT_NE(evidence.writer, nullptr);
  Store& writer = *evidence.writer;
  const SyntheticJob job = EvidenceJob(27);
  std::vector<std::vector<v1::Batch>> batches;
  for (int node = 0; node < job.nodes; ++node) {
    batches.push_back(SyntheticBatches(job, node));
    ASSERT_EQ(batches.back().size(), 8u);
  }
  ClockSolveState state;
  state.settle_margin_ns = 0;  // settle up to each node's latest start
  std::optional<StoredJobResult> stored;
  std::vector<int64_t> settled;  // spans settled after each part
  // Part i: every node's batch i; node 1's batch 4 comes with part 6.
  for (size_t i = 0; i < 8; ++i) {
    SCOPED_TRACE(i);
    std::vector<const v1::Batch*> part;
    for (int node = 0; node < job.nodes; ++node) {
      if (node == 1 && i == 4) continue;
      part.push_back(&batches[node][i]);
    }
    if (i == 6) part.push_back(&batches[1][4]);
    ASSERT_TRUE(writer.Write(part).ok());
    JobCatalog catalog;
    auto reader = Reader(evidence.location, &catalog);
    ASSERT_NE(reader, nullptr);
    const int64_t incremental = state.incremental_updates;
    const int64_t full = state.full_solves;
    auto updated =
        JobClocks::Update(*reader, catalog, &stored, nullptr, nullptr, &state);
    ASSERT_TRUE(updated.ok()) << updated.status();
    ASSERT_TRUE(updated->new_solution().has_value());
    EXPECT_EQ(updated->new_solution()->data, WholeSolve(*reader, catalog));
    auto all = JobClocks::Update(*reader, catalog, nullptr);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(updated->evidence_spans(), all->evidence_spans());
    EXPECT_EQ(state.settled_spans + static_cast<int64_t>(state.open.size()),
              all->evidence_spans());
    // The first update, and the one the late batch breaks, solve whole.
    const bool whole = i == 0 || i == 6;
    EXPECT_EQ(state.full_solves, full + (whole ? 1 : 0));
    EXPECT_EQ(state.incremental_updates, incremental + (whole ? 0 : 1));
    settled.push_back(state.settled_spans);
    ASSERT_TRUE(
        writer.SaveClockSolution(catalog.job.id, *updated->new_solution())
            .ok());
    stored = updated->new_solution();
  }
  // A node's batches go a rank at a time, so instances (of a known size:
  // the spans say 8) settle once every rank's member is there; at the end,
  // all 55 instances of 8 spans but the last.
  EXPECT_EQ(settled, (std::vector<int64_t>{0, 0, 0, 16, 16, 128, 352, 432}));
  EXPECT_EQ(state.settled.groups(), 54);
  EXPECT_EQ(state.open.size(), 8u);
  // A solution that was not stored: the state is not trusted.
  JobCatalog catalog;
  auto reader = Reader(evidence.location, &catalog);
  ASSERT_NE(reader, nullptr);
  std::optional<StoredJobResult> other = stored;
  other->computed_ns += 1;
  other->spans -= 1;  // not the job as it stands either
  const int64_t full = state.full_solves;
  auto again =
      JobClocks::Update(*reader, catalog, &other, nullptr, nullptr, &state);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(state.full_solves, full + 1);
  EXPECT_EQ(again->new_solution()->data, WholeSolve(*reader, catalog));
}

// A later span that would change what the state settled: the update
// solves from all the chunks, and the solution is the whole job's.
TEST(JobClocksTest, SpansThatWouldChangeSettledGroupsAreSolvedWhole) {
  EvidenceStore evidence = NewEvidenceStore();
  ASSERT_NE(evidence.writer, nullptr);
  Store& writer = *evidence.writer;
  constexpr int64_t kT0 = 1700000000000000000;
  constexpr int64_t kMs = 1000000;
  // Ranks 0 (node-a) and 1 (node-b); a communicator of unknown size.
  auto allreduce = [](BatchBuilder& b, int track, int64_t at, uint64_t seq) {
    v1::Span* s = b.AddSpan(track, v1::CATEGORY_MPI, "MPI_Allreduce", at,
                            100000 + static_cast<int64_t>(seq) * 1000);
    s->set_comm(1);
    s->set_seq(seq);
  };
  auto message = [](BatchBuilder& b, int track, bool send, int64_t at,
                    int peer) {
    v1::Span* s = b.AddSpan(track, v1::CATEGORY_MPI,
                            send ? "MPI_Send" : "MPI_Recv", at, 50000);
    s->set_comm(1);
    s->set_peer(peer);
    s->set_tag(5);
  };
  BatchBuilder a("agent-a"), b("agent-b");
  const int pa = a.DeclareProcess({"evidence", "node-a", 0, 0, 100, 0});
  const int pb = b.DeclareProcess({"evidence", "node-b", 1, 0, 101, 0});
  const int ta = a.DeclareTrack(pa, v1::TRACK_KIND_THREAD, 1, "main");
  const int tb = b.DeclareTrack(pb, v1::TRACK_KIND_THREAD, 1, "main");
  allreduce(a, ta, kT0 + kMs, 1);
  allreduce(b, tb, kT0 + kMs + 7000, 1);
  message(a, ta, true, kT0 + 2 * kMs, 1);
  message(b, tb, false, kT0 + 2 * kMs - 30000, 0);
  allreduce(a, ta, kT0 + 100 * kMs, 2);
  allreduce(b, tb, kT0 + 100 * kMs, 2);
  std::vector<v1::Batch> parts;
  parts.push_back(a.Take());
  parts.push_back(b.Take());

  ClockSolveState state;
  state.settle_margin_ns = 0;
  std::optional<StoredJobResult> stored;
  // Writes `batches`, updates, checks the solution is the whole job's and
  // returns whether the update was incremental.
  auto update = [&](const std::vector<v1::Batch>& batches) {
    std::vector<const v1::Batch*> pointers;
    for (const v1::Batch& batch : batches) pointers.push_back(&batch);
    EXPECT_TRUE(writer.Write(pointers).ok());
    JobCatalog catalog;
    auto reader = Reader(evidence.location, &catalog);
    EXPECT_NE(reader, nullptr);
    if (reader == nullptr) return false;
    const int64_t incremental = state.incremental_updates;
    auto updated =
        JobClocks::Update(*reader, catalog, &stored, nullptr, nullptr, &state);
    EXPECT_TRUE(updated.ok()) << updated.status();
    if (!updated.ok()) return false;
    EXPECT_EQ(updated->new_solution()->data, WholeSolve(*reader, catalog));
    EXPECT_TRUE(
        writer.SaveClockSolution(catalog.job.id, *updated->new_solution())
            .ok());
    stored = updated->new_solution();
    return state.incremental_updates > incremental;
  };
  EXPECT_FALSE(update(parts));  // the first: whole
  // Instance 1 and the message settled: both ranks went past them.
  EXPECT_EQ(state.settled.groups(), 2);
  EXPECT_TRUE(state.settled.Closed(1, 1));

  // Rank 2 (node-b), late into instance 1: solved whole.
  BatchBuilder c("agent-c");
  const int pc = c.DeclareProcess({"evidence", "node-b", 2, 1, 102, 0});
  const int tc = c.DeclareTrack(pc, v1::TRACK_KIND_THREAD, 1, "main");
  allreduce(c, tc, kT0 + kMs + 3000, 1);
  allreduce(c, tc, kT0 + 100 * kMs, 2);
  EXPECT_FALSE(update({c.Take()}));

  // A send of rank 0 on another thread, before the settled one: it pairs
  // with the receive instead (non-overtaking order), so: whole.
  const int ta2 = a.DeclareTrack(pa, v1::TRACK_KIND_THREAD, 2, "comm");
  message(a, ta2, true, kT0 + 2 * kMs - 500000, 1);
  EXPECT_FALSE(update({a.Take()}));

  // A span of rank 1's main thread before its horizon (written late).
  message(b, tb, false, kT0 + 50 * kMs, 0);
  EXPECT_FALSE(update({b.Take()}));

  // Then spans in order: incremental.
  allreduce(a, ta, kT0 + 200 * kMs, 3);
  allreduce(b, tb, kT0 + 200 * kMs + 1000, 3);
  allreduce(c, tc, kT0 + 200 * kMs + 2000, 3);
  EXPECT_TRUE(update({a.Take(), b.Take(), c.Take()}));

  // Without the state (a restarted collector): solved whole from the
  // chunks, the same spans.
  JobCatalog catalog;
  auto reader = Reader(evidence.location, &catalog);
  ASSERT_NE(reader, nullptr);
  auto again = JobClocks::Update(*reader, catalog, nullptr);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->new_solution()->data, WholeSolve(*reader, catalog));
  EXPECT_EQ(again->evidence_spans(),
            state.settled_spans + static_cast<int64_t>(state.open.size()));
}

// A halo exchange of MPI_Sendrecv between rank 0 (node-a) and rank 1
// (node-b, its clock 40 us behind), an iteration a part, each followed by
// an Allreduce. In iteration 3 rank 1 receives with a plain MPI_Recv and
// sends from another thread with MPI_Send, written a part later: rank 0's
// Sendrecv of iteration 3 has one message settled-ready and one not, and
// stays open, with its settled-ready message, until both are. Every update
// is incremental and solves as the whole job.
TEST(JobClocksTest, SendrecvsSettleWithBothOfTheirMessages) {
  EvidenceStore evidence = NewEvidenceStore();
  ASSERT_NE(evidence.writer, nullptr);
  Store& writer = *evidence.writer;
  constexpr int64_t kT0 = 1700000000000000000;
  constexpr int64_t kMs = 1000000;
  constexpr int64_t kSkew = 40000;  // node-b reads 40 us behind
  BatchBuilder a("agent-a"), b("agent-b");
  const int pa = a.DeclareProcess({"evidence", "node-a", 0, 0, 100, 0});
  const int pb = b.DeclareProcess({"evidence", "node-b", 1, 0, 101, 0});
  const int ta = a.DeclareTrack(pa, v1::TRACK_KIND_THREAD, 1, "main");
  const int tb = b.DeclareTrack(pb, v1::TRACK_KIND_THREAD, 1, "main");
  auto span = [](BatchBuilder& builder, int track, const char* name, int64_t at,
                 int64_t dur, int peer) {
    v1::Span* s = builder.AddSpan(track, v1::CATEGORY_MPI, name, at, dur);
    s->set_comm(1);
    if (peer >= 0) {
      s->set_peer(peer);
      s->set_tag(5);
    }
    return s;
  };
  auto exchange = [&span](BatchBuilder& builder, int track, int64_t at,
                          int other) {
    v1::Span* s = span(builder, track, "MPI_Sendrecv", at, 2 * kMs, other);
    v1::Arg* peer = s->add_args();
    peer->set_key(builder.String("recv_peer"));
    peer->set_int_(other);
    v1::Arg* tag = s->add_args();
    tag->set_key(builder.String("recv_tag"));
    tag->set_int_(5);
  };
  auto allreduce = [&span](BatchBuilder& builder, int track, int64_t at,
                           uint64_t seq) {
    span(builder, track, "MPI_Allreduce", at, kMs, -1)->set_seq(seq);
  };
  ClockSolveState state;
  state.settle_margin_ns = 0;
  std::optional<StoredJobResult> stored;
  std::vector<int64_t> settled, open;
  int comm_track = -1;
  for (int k = 0; k < 6; ++k) {
    SCOPED_TRACE(k);
    const int64_t t = kT0 + k * 10 * kMs;
    exchange(a, ta, t, 1);
    if (k == 3) {
      span(b, tb, "MPI_Recv", t + 200000 - kSkew, kMs, 0);
    } else {
      exchange(b, tb, t + 200000 - kSkew, 0);
    }
    if (k == 4) {  // iteration 3's send, late, on a thread of its own
      comm_track = b.DeclareTrack(pb, v1::TRACK_KIND_THREAD, 2, "comm");
      span(b, comm_track, "MPI_Send", kT0 + 30 * kMs + kMs - kSkew, 100000, 0);
    }
    if (k == 5) {  // the thread goes past its Send: a call matching nothing
      span(b, comm_track, "MPI_Allreduce", t - kSkew, kMs, -1);
    }
    allreduce(a, ta, t + 5 * kMs, k);
    allreduce(b, tb, t + 5 * kMs - kSkew, k);
    const v1::Batch part_a = a.Take(), part_b = b.Take();
    ASSERT_TRUE(writer.Write({&part_a, &part_b}).ok());
    JobCatalog catalog;
    auto reader = Reader(evidence.location, &catalog);
    ASSERT_NE(reader, nullptr);
    const int64_t full = state.full_solves;
    auto updated =
        JobClocks::Update(*reader, catalog, &stored, nullptr, nullptr, &state);
    ASSERT_TRUE(updated.ok()) << updated.status();
    EXPECT_EQ(updated->new_solution()->data, WholeSolve(*reader, catalog));
    EXPECT_EQ(state.full_solves, full + (k == 0 ? 1 : 0));
    ASSERT_TRUE(
        writer.SaveClockSolution(catalog.job.id, *updated->new_solution())
            .ok());
    stored = updated->new_solution();
    settled.push_back(state.settled_spans);
    open.push_back(static_cast<int64_t>(state.open.size()));
  }
  // Each part's exchanges settle once the track has gone past them (its
  // Allreduce started after they ended), the Allreduces a part later (an
  // instance of unknown size closes only once both ranks went past it).
  // Part 3: rank 0's exchange and rank 1's Recv wait for the late Send;
  // part 4 brings it, but it is its thread's latest span (it may still be
  // followed by an earlier-ending one); part 5's call on that thread, which
  // matches nothing (no seq) and stays open, settles the three.
  EXPECT_EQ(settled, (std::vector<int64_t>{2, 6, 10, 12, 16, 23}));
  EXPECT_EQ(open, (std::vector<int64_t>{2, 2, 2, 4, 5, 3}));
}

}  // namespace
}  // namespace meridian
