#include "query/analysis/step_summaries.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "query/analysis/dependency_graph.h"
#include "query/analysis/job_spans.h"
#include "query/analysis/step_breakdown.h"
#include "query/analysis/stragglers.h"
#include "testing/counting_store.h"
#include "testing/scenario_fixture.h"
#include "testing/synthetic_job.h"
#include "testing/test_store.h"
#include "wire/batch_builder.h"

namespace meridian {
namespace {

// The whole job's answers, from a load of all its spans.
struct WholeJob {
  v1::StepsReply steps;
  v1::StragglersReply stragglers;
};

WholeJob LoadWhole(Store& store, const JobCatalog& catalog) {
  std::optional<JobClocks> clocks;
  auto spans = JobSpans::Load(store, catalog, &clocks);
  EXPECT_TRUE(spans.ok()) << spans.status();
  if (!spans.ok()) return {};
  DependencyGraph graph(*spans);
  return {StepBreakdown(graph), Stragglers(graph, 0)};
}

// Saves what Update made, as the collector's writer does.
void Save(Store& store, const JobCatalog& catalog,
          const StepSummaries::Made& made) {
  ASSERT_TRUE(
      store.SaveStepSummaries(catalog.job.id, made.steps, made.state).ok());
}

class StepSummariesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto location =
        NewStoreLocation(StoreKindFromEnvironment(), "step_summaries");
    ASSERT_TRUE(location.ok()) << location.status();
    location_ = *location;
    StoreOptions options;
    options.full_sync = false;
    auto store = Store::Open(location_, options);
    ASSERT_TRUE(store.ok()) << store.status();
    writer_ = std::move(*store);
  }

  // Writes node batches [from, to) of `job` (to -1: all).
  void Write(const SyntheticJob& job, size_t from, size_t to) {
    for (int node = 0; node < job.nodes; ++node) {
      std::vector<v1::Batch> batches = SyntheticBatches(job, node);
      std::vector<const v1::Batch*> pointers;
      for (size_t i = from; i < std::min(to, batches.size()); ++i) {
        pointers.push_back(&batches[i]);
      }
      ASSERT_TRUE(writer_->Write(pointers).ok());
    }
  }

  // A reader's view of the job now (as a query opens it).
  std::unique_ptr<Store> Reader(const std::string& job, JobCatalog* catalog) {
    StoreOptions options;
    options.read_only = true;
    // Exactly the late writes (ClickHouse's 5 s margin would report every
    // write of this test again: store_test checks it).
    options.write_mark_margin_ns = 0;
    auto store = Store::Open(location_, options);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return nullptr;
    EXPECT_TRUE((*store)->BeginSnapshot().ok());
    auto loaded = (*store)->LoadCatalog(job);
    EXPECT_TRUE(loaded.ok()) << loaded.status();
    if (loaded.ok()) *catalog = std::move(*loaded);
    return std::move(*store);
  }

  std::string location_;
  std::unique_ptr<Store> writer_;
};

// Summaries answer what a load of the whole job answers: the same steps,
// figure for figure, and the same waits over the instances tagged with a
// step (all but the Bcast before step 0).
TEST_F(StepSummariesTest, SummariesAnswerAsTheWholeJobDoes) {
  SyntheticJob job;
  job.job = "whole";
  job.steps = 12;
  job.jitter_ns = 50000;
  job.spans_per_batch = 40;
  Write(job, 0, SIZE_MAX);
  JobCatalog catalog;
  auto reader = Reader("whole", &catalog);
  ASSERT_NE(reader, nullptr);
  auto made = StepSummaries::Update(*reader, catalog, uint64_t{1} << 30);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_FALSE(made->current);
  EXPECT_EQ(made->steps.size(), 12u);
  EXPECT_EQ(made->steps.front().step, 0);
  auto mark = reader->WriteMark(catalog.job.id);
  ASSERT_TRUE(mark.ok()) << mark.status();
  EXPECT_EQ(made->state.data,
            absl::StrCat("meridian-steps 2\ncomplete 10\nlast 11\nmark ", *mark,
                         "\n"));

  const WholeJob whole = LoadWhole(*reader, catalog);
  auto steps = StepSummaries::Steps(*reader, catalog, *made, std::nullopt,
                                    /*means_only=*/false);
  ASSERT_TRUE(steps.ok()) << steps.status();
  EXPECT_TRUE(steps->from_summaries());
  steps->clear_from_summaries();
  steps->clear_summarised();
  EXPECT_EQ(steps->DebugString(), whole.steps.DebugString());

  auto stragglers = StepSummaries::Stragglers(*reader, catalog, *made, 0);
  ASSERT_TRUE(stragglers.ok()) << stragglers.status();
  EXPECT_TRUE(stragglers->from_summaries());
  EXPECT_EQ(whole.stragglers.instances(), 25);  // the Bcast and 2 a step
  EXPECT_EQ(stragglers->instances(), 24);
  EXPECT_EQ(stragglers->messages(), 0);
  ASSERT_EQ(stragglers->ranks_size(), 4);
  // The whole job's waits, step by step, summed per rank.
  std::optional<JobClocks> clocks;
  auto spans = JobSpans::Load(*reader, catalog, &clocks);
  ASSERT_TRUE(spans.ok());
  const DependencyGraph graph(*spans);
  std::map<int32_t, v1::RankWait> expected;
  for (const auto& [step, reply] : StragglersByStep(graph, 0, 11, 0)) {
    for (const v1::RankWait& w : reply.ranks()) {
      v1::RankWait& e = expected[w.rank()];
      e.set_rank(w.rank());
      e.set_wait_ns(e.wait_ns() + w.wait_ns());
      e.set_collective_wait_ns(e.collective_wait_ns() + w.collective_wait_ns());
      e.set_instances_last(e.instances_last() + w.instances_last());
      e.set_waited_ns(e.waited_ns() + w.waited_ns());
    }
  }
  for (const v1::RankWait& r : stragglers->ranks()) {
    EXPECT_EQ(r.DebugString(), expected[r.rank()].DebugString());
  }
  // The Bcast's skew made one rank last once more in the whole job.
  int64_t last = 0, whole_last = 0;
  for (const auto& r : stragglers->ranks()) last += r.instances_last();
  for (const auto& r : whole.stragglers.ranks()) {
    whole_last += r.instances_last();
  }
  EXPECT_EQ(whole_last, last + 1);
  int64_t listed_skew = 0, whole_skew = 0;
  for (const auto& c : stragglers->collectives()) listed_skew += c.skew_ns();
  for (const auto& c : whole.stragglers.collectives()) {
    if (c.has_step()) whole_skew += c.skew_ns();
  }
  EXPECT_EQ(stragglers->collectives_size(), 24);
  EXPECT_EQ(listed_skew, whole_skew);

  // head 3: the 3 most skewed tagged ones.
  std::vector<int64_t> skews;
  for (const auto& c : whole.stragglers.collectives()) {
    if (c.has_step()) skews.push_back(c.skew_ns());
  }
  auto head = StepSummaries::Stragglers(*reader, catalog, *made, 3);
  ASSERT_TRUE(head.ok());
  ASSERT_EQ(head->collectives_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(head->collectives(i).skew_ns(), skews[i]);
  }
  // Means only, and one rank's figures.
  auto means = StepSummaries::Steps(*reader, catalog, *made, std::nullopt,
                                    /*means_only=*/true);
  ASSERT_TRUE(means.ok());
  EXPECT_EQ(means->steps(3).ranks_size(), 0);
  EXPECT_EQ(means->steps(3).compute_ns(), whole.steps.steps(3).compute_ns());
  auto rank2 = StepSummaries::Steps(*reader, catalog, *made, 2, false);
  ASSERT_TRUE(rank2.ok());
  ASSERT_EQ(rank2->steps(3).ranks_size(), 1);
  EXPECT_EQ(rank2->steps(3).ranks(0).DebugString(),
            whole.steps.steps(3).ranks(2).DebugString());
}

// As the job runs, each update makes only the steps after the last
// complete one; a finished job's summaries are current and read as stored.
TEST_F(StepSummariesTest, UpdatesMakeOnlyTheStepsNotYetComplete) {
  SyntheticJob job;
  job.job = "growing";
  job.steps = 20;
  job.spans_per_batch = 60;  // 10 batches a node: steps 0..4 in the first 2
  Write(job, 0, 3);
  JobCatalog catalog;
  auto reader = Reader("growing", &catalog);
  ASSERT_NE(reader, nullptr);
  auto first = StepSummaries::Update(*reader, catalog, uint64_t{1} << 30);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_FALSE(first->steps.empty());
  EXPECT_EQ(first->steps.front().step, 0);
  // Each node's first batches hold its first rank's steps 0..19 and its
  // second rank's 0..9: ranks 1 and 3 bound what is complete (8).
  auto tracks = reader->TrackLastSteps(catalog.job.id);
  ASSERT_TRUE(tracks.ok()) << tracks.status();
  std::vector<int64_t> lasts;
  for (const auto& [track, last] : *tracks) lasts.push_back(last);
  std::sort(lasts.begin(), lasts.end());
  EXPECT_EQ(lasts, (std::vector<int64_t>{9, 9, 19, 19}));
  EXPECT_EQ(first->steps.back().step, 19);
  auto mark = reader->WriteMark(catalog.job.id);
  ASSERT_TRUE(mark.ok()) << mark.status();
  EXPECT_EQ(first->state.data,
            absl::StrCat("meridian-steps 2\ncomplete 8\nlast 19\nmark ", *mark,
                         "\n"));
  Save(*writer_, catalog, *first);

  Write(job, 3, SIZE_MAX);
  reader = Reader("growing", &catalog);
  auto second = StepSummaries::Update(*reader, catalog, uint64_t{1} << 30);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->current);
  ASSERT_FALSE(second->steps.empty());
  // The steps not complete before, again.
  EXPECT_EQ(second->steps.front().step, 9);
  EXPECT_EQ(second->steps.back().step, 19);
  EXPECT_EQ(second->steps.size(), 11u);
  mark = reader->WriteMark(catalog.job.id);
  ASSERT_TRUE(mark.ok()) << mark.status();
  EXPECT_EQ(second->state.data,
            absl::StrCat("meridian-steps 2\ncomplete 18\nlast 19\nmark ", *mark,
                         "\n"));
  // Read before it is saved: the stored ones, then the new.
  auto steps =
      StepSummaries::Steps(*reader, catalog, *second, std::nullopt, false);
  ASSERT_TRUE(steps.ok()) << steps.status();
  steps->clear_from_summaries();
  steps->clear_summarised();
  EXPECT_EQ(steps->DebugString(),
            LoadWhole(*reader, catalog).steps.DebugString());
  Save(*writer_, catalog, *second);

  reader = Reader("growing", &catalog);
  auto third = StepSummaries::Update(*reader, catalog, uint64_t{1} << 30);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_TRUE(third->current);
  EXPECT_TRUE(third->steps.empty());
  EXPECT_EQ(third->blocks, 0);
  auto stored =
      StepSummaries::Steps(*reader, catalog, *third, std::nullopt, false);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_EQ(stored->steps_size(), 20);
  stored->clear_from_summaries();
  stored->clear_summarised();
  EXPECT_EQ(stored->DebugString(), steps->DebugString());

  // The whole job's stragglers, with the summaries current: no span read,
  // the summaries read in one scan, the same answer as from the plain store.
  CountingStore counting(*reader);
  auto current = StepSummaries::Update(counting, catalog, uint64_t{1} << 30);
  ASSERT_TRUE(current.ok()) << current.status();
  auto stragglers = StepSummaries::Stragglers(counting, catalog, *current, 0);
  ASSERT_TRUE(stragglers.ok()) << stragglers.status();
  EXPECT_EQ(counting.scans(), 0);
  EXPECT_EQ(counting.summary_scans(), 1);
  auto plain = StepSummaries::Stragglers(*reader, catalog, *third, 0);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(stragglers->DebugString(), plain->DebugString());
  EXPECT_EQ(stragglers->ranks_size(), 4);

  // Deleting the job deletes its summaries.
  ASSERT_TRUE(writer_->DeleteJob("growing").ok());
  auto state = writer_->LoadSummaryState(catalog.job.id);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_FALSE(state->has_value());
}

// Spans that arrive late for steps already complete (one node's batch held
// back while its later ones were stored): the steps they are tagged with are
// made again, and only those (and the steps not yet complete).
TEST_F(StepSummariesTest, LateSpansRemakeTheCompleteStepsTheyTouch) {
  SyntheticJob job;
  job.job = "late";
  job.steps = 20;
  job.spans_per_batch = 60;
  const std::vector<v1::Batch> node1 = SyntheticBatches(job, 1);
  ASSERT_EQ(node1.size(), 4u);
  // Node 0 whole; node 1 without its batch 2 (its second rank's steps 0..9:
  // the rank's later batch is stored, so every step but 19 is complete).
  {
    std::vector<v1::Batch> node0 = SyntheticBatches(job, 0);
    std::vector<const v1::Batch*> pointers;
    for (const v1::Batch& b : node0) pointers.push_back(&b);
    for (size_t i = 0; i < node1.size(); ++i) {
      if (i != 2) pointers.push_back(&node1[i]);
    }
    ASSERT_TRUE(writer_->Write(pointers).ok());
  }
  JobCatalog catalog;
  auto reader = Reader("late", &catalog);
  ASSERT_NE(reader, nullptr);
  auto first = StepSummaries::Update(*reader, catalog, uint64_t{1} << 30);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->steps.size(), 20u);
  auto mark = reader->WriteMark(catalog.job.id);
  ASSERT_TRUE(mark.ok()) << mark.status();
  EXPECT_EQ(first->state.data,
            absl::StrCat("meridian-steps 2\ncomplete 18\nlast 19\nmark ", *mark,
                         "\n"));
  Save(*writer_, catalog, *first);

  ASSERT_TRUE(writer_->Write({&node1[2]}).ok());
  reader = Reader("late", &catalog);
  auto late = reader->StepsWrittenAfter(catalog.job.id, *mark, 18);
  ASSERT_TRUE(late.ok()) << late.status();
  std::vector<std::pair<int64_t, int64_t>> ranges(late->begin(), late->end());
  EXPECT_EQ(ranges, (std::vector<std::pair<int64_t, int64_t>>{{0, 9}}));
  // What was stored no longer answers as the whole job does...
  const WholeJob whole = LoadWhole(*reader, catalog);
  StepSummaries::Made none;
  none.state = first->state;
  auto stale =
      StepSummaries::Steps(*reader, catalog, none, std::nullopt, false);
  ASSERT_TRUE(stale.ok()) << stale.status();
  stale->clear_from_summaries();
  EXPECT_NE(stale->DebugString(), whole.steps.DebugString());
  // ...and the update makes the late steps again, and step 19.
  auto second = StepSummaries::Update(*reader, catalog, uint64_t{1} << 30);
  ASSERT_TRUE(second.ok()) << second.status();
  std::vector<int64_t> made;
  for (const StoredStepSummary& s : second->steps) made.push_back(s.step);
  EXPECT_EQ(made, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 19}));
  auto steps =
      StepSummaries::Steps(*reader, catalog, *second, std::nullopt, false);
  ASSERT_TRUE(steps.ok()) << steps.status();
  steps->clear_from_summaries();
  steps->clear_summarised();
  EXPECT_EQ(steps->DebugString(), whole.steps.DebugString());
  Save(*writer_, catalog, *second);
  reader = Reader("late", &catalog);
  auto stored = StepSummaries::Steps(*reader, catalog, StepSummaries::Made{},
                                     std::nullopt, false);
  ASSERT_TRUE(stored.ok()) << stored.status();
  stored->clear_from_summaries();
  EXPECT_EQ(stored->DebugString(), whole.steps.DebugString());
}

// A step that never ended (spans tagged with it, no "step" span: as
// auto_steps() leaves one open after the last optimizer.step()) has no
// summary, whether its block holds other steps or it alone.
TEST_F(StepSummariesTest, AStepThatNeverEndedHasNoSummary) {
  SyntheticJob job;
  job.job = "open-step";
  job.steps = 4;
  Write(job, 0, SIZE_MAX);
  BatchBuilder extra("open-step-extra");
  const int process =
      extra.DeclareProcess({"open-step", "node-extra", 4, 0, 404, 5});
  const int track =
      extra.DeclareTrack(process, v1::TRACK_KIND_THREAD, 1, "main");
  extra
      .AddSpan(track, v1::CATEGORY_USER, "eval", job.t0_ns + 4 * 10000000,
               30000)
      ->set_step(4);
  const v1::Batch batch = extra.Take();
  ASSERT_TRUE(writer_->Write({&batch}).ok());
  JobCatalog catalog;
  auto reader = Reader("open-step", &catalog);
  ASSERT_NE(reader, nullptr);
  // Blocks of every step, and of one step each (a budget of 30 spans).
  for (const uint64_t budget : {uint64_t{1} << 30, uint64_t{30 * 190}}) {
    SCOPED_TRACE(budget);
    auto made = StepSummaries::Update(*reader, catalog, budget);
    ASSERT_TRUE(made.ok()) << made.status();
    std::vector<int64_t> steps;
    for (const StoredStepSummary& step : made->steps)
      steps.push_back(step.step);
    EXPECT_EQ(steps, (std::vector<int64_t>{0, 1, 2, 3}));
    if (budget < 1000000) {
      EXPECT_EQ(made->blocks, 5);
    }
  }
}

TEST_F(StepSummariesTest, FailuresSayWhy) {
  SyntheticJob job;
  job.job = "failures";
  job.steps = 4;
  Write(job, 0, SIZE_MAX);
  JobCatalog catalog;
  auto reader = Reader("failures", &catalog);
  ASSERT_NE(reader, nullptr);

  // Stopped (the collector shutting down): CANCELLED, nothing made.
  const std::atomic<bool> cancel{true};
  auto stopped =
      StepSummaries::Update(*reader, catalog, uint64_t{1} << 30, &cancel);
  EXPECT_EQ(stopped.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(stopped.status().message(),
            "summarising job failures's steps: stopped at step 0");

  // A step too large for the budget: refused, naming the limit.
  auto refused = StepSummaries::Update(*reader, catalog, 1000);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(refused.status().message(),
            "job failures's steps have about 25 spans each: summarising one "
            "would take about 0 MiB, over this collector's "
            "--analysis-memory-mib 0; raise the limit, or analyse one step "
            "(--step N)");

  // One step over the budget, where the mean step is within it: refused
  // by name before it is read whole.
  BatchBuilder extra("failures-extra");
  const int process =
      extra.DeclareProcess({"failures", "node-extra", 4, 0, 404, 5});
  const int track =
      extra.DeclareTrack(process, v1::TRACK_KIND_THREAD, 1, "main");
  const int64_t step_2 = job.t0_ns + 2 * 10000000;
  for (int i = 0; i < 200; ++i) {
    extra.AddSpan(track, v1::CATEGORY_USER, "extra", step_2 + 40000 * i, 30000)
        ->set_step(2);
  }
  const v1::Batch batch = extra.Take();
  ASSERT_TRUE(writer_->Write({&batch}).ok());
  reader = Reader("failures", &catalog);
  ASSERT_EQ(catalog.job.spans, 4 * 25 + 200);
  auto over = StepSummaries::Update(*reader, catalog, 100 * 190);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(over.status().message(),
            "job failures's step 2 holds more than 100 spans: summarising it "
            "would take more than this collector's --analysis-memory-mib 0; "
            "raise the limit");
  // Within a budget that holds step 2 but not the blocks the mean step
  // asks for: the blocks are read as fewer steps, and the summaries are
  // those of blocks of every step.
  auto fewer = StepSummaries::Update(*reader, catalog, 240 * 190);
  ASSERT_TRUE(fewer.ok()) << fewer.status();
  auto all = StepSummaries::Update(*reader, catalog, uint64_t{1} << 30);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->blocks, 1);
  EXPECT_GT(fewer->blocks, 1);
  ASSERT_EQ(fewer->steps.size(), 4u);
  ASSERT_EQ(all->steps.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(fewer->steps[i].step, all->steps[i].step);
    EXPECT_EQ(fewer->steps[i].data, all->steps[i].data) << i;
  }

  // A stored summary that does not read: DATA_LOSS naming the step.
  auto made = StepSummaries::Update(*reader, catalog, uint64_t{1} << 30);
  ASSERT_TRUE(made.ok()) << made.status();
  made->steps[2].data = "meridian-step 1\n\xff\xff\xff";
  Save(*writer_, catalog, *made);
  reader = Reader("failures", &catalog);
  auto current = StepSummaries::Update(*reader, catalog, uint64_t{1} << 30);
  ASSERT_TRUE(current.ok()) << current.status();
  ASSERT_TRUE(current->current);
  auto steps =
      StepSummaries::Steps(*reader, catalog, *current, std::nullopt, false);
  EXPECT_EQ(steps.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(steps.status().message(),
            "job failures: the stored summary of step 2 does not read");

  // A damaged state is made again whole.
  StoredJobResult state = current->state;
  state.data = "meridian-steps 1\ncomplete x\n";
  ASSERT_TRUE(writer_->SaveStepSummaries(catalog.job.id, {}, state).ok());
  reader = Reader("failures", &catalog);
  auto again = StepSummaries::Update(*reader, catalog, uint64_t{1} << 30);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->current);
  EXPECT_EQ(again->steps.size(), 4u);
}

// A job without steps has no summaries: the caller analyses it whole.
TEST(StepSummariesScenarioTest, AJobWithoutStepsIsNotFound) {
  auto f = ScenarioFixture::Load("p2p-chain");
  ASSERT_NE(f, nullptr);
  auto range = f->store->StepRange(f->catalog.job.id);
  ASSERT_TRUE(range.ok());
  if (range->has_value()) GTEST_SKIP() << "p2p-chain has steps";
  auto made = StepSummaries::Update(*f->store, f->catalog, uint64_t{1} << 30);
  EXPECT_EQ(made.status().code(), absl::StatusCode::kNotFound);
}

// Every scenario with steps: the summaries' steps are the whole job's.
TEST(StepSummariesScenarioTest, ScenarioStepsMatchTheWholeJob) {
  for (const char* scenario :
       {"slow-rank", "slow-link", "late-every-other-step"}) {
    SCOPED_TRACE(scenario);
    auto f = ScenarioFixture::Load(scenario);
    ASSERT_NE(f, nullptr);
    auto made = StepSummaries::Update(*f->store, f->catalog, uint64_t{1} << 30);
    ASSERT_TRUE(made.ok()) << made.status();
    auto steps =
        StepSummaries::Steps(*f->store, f->catalog, *made, std::nullopt, false);
    ASSERT_TRUE(steps.ok()) << steps.status();
    steps->clear_from_summaries();
    steps->clear_summarised();
    EXPECT_EQ(steps->DebugString(), StepBreakdown(*f->graph).DebugString());
    auto stragglers =
        StepSummaries::Stragglers(*f->store, f->catalog, *made, 0);
    ASSERT_TRUE(stragglers.ok()) << stragglers.status();
    const v1::StragglersReply whole = Stragglers(*f->graph, 0);
    EXPECT_LE(stragglers->instances(), whole.instances());
    int64_t wait = 0, whole_wait = 0;
    for (const auto& r : stragglers->ranks()) wait += r.wait_ns();
    for (const auto& r : whole.ranks()) whole_wait += r.wait_ns();
    EXPECT_LE(wait, whole_wait);
    if (stragglers->instances() == whole.instances() &&
        stragglers->messages() == whole.messages()) {
      EXPECT_EQ(wait, whole_wait);
    }
  }
}

}  // namespace
}  // namespace meridian
