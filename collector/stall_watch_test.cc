#include "collector/stall_watch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "query/analysis/job_health.h"
#include "query/health_report.h"

namespace meridian {
namespace {

constexpr int64_t kS = 1000000000;

// Ranks 0 and 1 in MPI_Allreduce #3 for `for_ns`; rank 2 in nothing for as
// long.
std::vector<v1::ProcessActivity> Job(int64_t for_ns) {
  std::vector<v1::ProcessActivity> out;
  for (int rank = 0; rank < 3; ++rank) {
    v1::ProcessActivity& p = out.emplace_back();
    p.set_job("j");
    p.set_rank(rank);
    p.set_pid(100 + rank);
    v1::ThreadActivity* t = p.add_threads();
    t->set_tid(100 + rank);
    t->set_peer(-1);
    t->set_tag(-1);
    if (rank < 2) {
      t->set_call("MPI_Allreduce");
      t->set_category(v1::CATEGORY_MPI);
      t->set_call_ns(for_ns);
      t->set_comm(1);
      t->set_comm_size(3);
      t->set_has_seq(true);
      t->set_seq(3);
      t->set_idle_ns(-1);
    } else {
      t->set_idle_ns(for_ns);
    }
  }
  return out;
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(StallWatchTest, AStallRunsTheHookOnceWithTheAnswer) {
  char dir[] = "/tmp/stall-watch-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/done";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Open read-write, once: each hook's line waits in it whenever it comes,
  // and a read never sees end-of-file between two hooks.
  FILE* done = fopen(fifo.c_str(), "r+");
  ASSERT_NE(done, nullptr);
  ActivityBoard board;
  const absl::Time t0 = absl::FromUnixSeconds(5000);
  // The hook keeps its stdin and says the job's name on the FIFO.
  StallWatch watch(&board, 2 * kS,
                   std::string("cat > ") + dir +
                       "/answer; echo \"$MERIDIAN_JOB\" > " + fifo);
  ASSERT_TRUE(board.Report("a", "n0", Job(kS), t0).ok());
  watch.Check(t0);
  EXPECT_TRUE(watch.Stalled().empty());
  EXPECT_EQ(watch.hooks_run(), 0);

  ASSERT_TRUE(board.Report("a", "n0", Job(3 * kS), t0).ok());
  watch.Check(t0);
  ASSERT_EQ(watch.Stalled().size(), 1u);
  EXPECT_EQ(watch.Stalled()[0].first, "j");
  EXPECT_DOUBLE_EQ(watch.Stalled()[0].second, 3.0);
  EXPECT_EQ(watch.hooks_run(), 1);
  char line[64] = {};
  ASSERT_NE(fgets(line, sizeof(line), done), nullptr);  // the hook's
  EXPECT_STREQ(line, "j\n");
  std::vector<LiveProcess> live = board.Job("j", t0);
  EXPECT_EQ(Read(std::string(dir) + "/answer"),
            HealthJson(DiagnoseHealth("j", live, 2 * kS)));

  // Still stalled: not again. Progress, then a new stall: again.
  ASSERT_TRUE(board.Report("a", "n0", Job(4 * kS), t0).ok());
  watch.Check(t0);
  EXPECT_EQ(watch.hooks_run(), 1);
  ASSERT_TRUE(board.Report("a", "n0", Job(kS / 10), t0).ok());
  watch.Check(t0);
  EXPECT_TRUE(watch.Stalled().empty());
  ASSERT_TRUE(board.Report("a", "n0", Job(3 * kS), t0).ok());
  watch.Check(t0);
  EXPECT_EQ(watch.hooks_run(), 2);
  ASSERT_NE(fgets(line, sizeof(line), done), nullptr);
  fclose(done);
  // Its processes gone: no longer stalled.
  ASSERT_TRUE(board.Report("a", "n0", {}, t0).ok());
  watch.Check(t0);
  EXPECT_TRUE(watch.Stalled().empty());
  system((std::string("rm -rf ") + dir).c_str());
}

// Rank `rank` of job "s": steps first..last of `compute_ns` each.
v1::ProcessActivity Steps(int32_t rank, int64_t first, int64_t last,
                          int64_t compute_ns) {
  v1::ProcessActivity p;
  p.set_job("s");
  p.set_rank(rank);
  p.set_pid(200 + rank);
  for (int64_t step = first; step <= last; ++step) {
    v1::StepTime* t = p.add_steps();
    t->set_step(step);
    t->set_dur_ns(compute_ns);
  }
  return p;
}

TEST(StallWatchTest, ANewSlowdownRunsItsHookOnce) {
  char dir[] = "/tmp/stall-watch-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/done";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  FILE* done = fopen(fifo.c_str(), "r+");
  ASSERT_NE(done, nullptr);
  ActivityBoard board;
  SlowdownWatch slowdowns;
  const absl::Time t0 = absl::FromUnixSeconds(5000);
  StallWatch watch(&board, 60 * kS, "", &slowdowns,
                   std::string("cat > ") + dir +
                       "/answer; echo \"$MERIDIAN_JOB\" > " + fifo);
  slowdowns.Add("n0", Steps(0, 0, 99, 2000000), t0);
  watch.Check(t0);
  EXPECT_EQ(watch.hooks_run(), 0);
  // Rank 0 computes 1.5 times as long from step 100: one hook, once.
  slowdowns.Add("n0", Steps(0, 100, 149, 3000000), t0);
  watch.Check(t0);
  EXPECT_EQ(watch.hooks_run(), 1);
  char line[64] = {};
  ASSERT_NE(fgets(line, sizeof(line), done), nullptr);
  EXPECT_STREQ(line, "s\n");
  EXPECT_EQ(Read(std::string(dir) + "/answer"),
            "{\"job\":\"s\",\"state\":\"finished\",\"stalled_for_ns\":0,"
            "\"stall_after_ns\":60000000000,\"stalls\":[],\"ranks\":[],"
            "\"slowdowns\":[{\"rank\":0,\"node\":\"n0\",\"metric\":"
            "\"compute\",\"from_step\":100,\"ratio\":1.500,"
            "\"baseline_ns\":2000000,\"now_ns\":3000000,\"counters\":[]}]}\n");
  slowdowns.Add("n0", Steps(0, 150, 199, 3000000), t0);
  watch.Check(t0);
  EXPECT_EQ(watch.hooks_run(), 1);  // the same slowdown: not again
  fclose(done);
  system((std::string("rm -rf ") + dir).c_str());
}

}  // namespace
}  // namespace meridian
