// A job's clock solution stored and read back (JobClocks::Load with a
// StoredJobResult), on both stores.
#include "query/clocks/job_clocks.h"

#include <atomic>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "testing/scenario_fixture.h"

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

}  // namespace
}  // namespace meridian
