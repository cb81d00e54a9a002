#include "collector/job_refresher.h"

#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace meridian {
namespace {

// Holds the refresh of job "first" until Open(), so that the refresher is
// busy meanwhile, as a long refresh would keep it.
class Gate {
 public:
  // Called as each refresh starts.
  void Pass(const std::string& job) {
    if (job != "first") return;
    absl::MutexLock lock(&mu_);
    started_ = true;
    mu_.Await(absl::Condition(&open_));
  }
  // Until "first"'s refresh has started.
  void WaitStarted() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&started_));
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }

 private:
  absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool open_ ABSL_GUARDED_BY(mu_) = false;
};

// What the refresher asked for, in order: "job" (whole) or "job/summaries".
class Calls {
 public:
  absl::Status Record(const std::string& job, bool whole) {
    absl::MutexLock lock(&mu_);
    calls_.push_back(whole ? job : absl::StrCat(job, "/summaries"));
    return absl::OkStatus();
  }
  std::vector<std::string> Get() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  size_t Size() {
    absl::MutexLock lock(&mu_);
    return calls_.size();
  }
  // A refresh that records its calls here (after `gate`, if any, lets it).
  JobRefresher::Refresh Recorder(Gate* gate = nullptr) {
    return [this, gate](const std::string& job, bool whole,
                        const std::atomic<bool>&) {
      if (gate != nullptr) gate->Pass(job);
      return Record(job, whole);
    };
  }
  // Whether `n` calls were made within `timeout`.
  bool WaitFor(size_t n, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto made = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return calls_.size() >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&made), timeout);
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
};

TEST(JobRefresherTest, AJobIsRefreshedOnceItGoesQuiet) {
  Calls calls;
  // Quiet for 1 s: the three changes, made at once, are one refresh.
  JobRefresher refresher(calls.Recorder(), absl::Seconds(1),
                         absl::ZeroDuration());
  refresher.Changed("a");
  refresher.Changed("a");
  refresher.Changed("b");
  refresher.Changed("a");
  EXPECT_EQ(refresher.counters().waiting, 2);
  ASSERT_TRUE(refresher.WaitIdle(absl::Seconds(30)));
  // "b" went quiet first: "a" changed after it.
  EXPECT_EQ(calls.Get(), (std::vector<std::string>{"b", "a"}));
  const RefreshCounters counters = refresher.counters();
  EXPECT_EQ(counters.refreshed, 2);
  EXPECT_EQ(counters.failed, 0);
  EXPECT_EQ(counters.waiting, 0);
}

TEST(JobRefresherTest, AJobWhoseProcessesEndedIsRefreshedAtOnce) {
  Calls calls;
  // Quiet for an hour: only Ended makes a job due within the test.
  JobRefresher refresher(calls.Recorder(), absl::Hours(1),
                         absl::ZeroDuration());
  refresher.Changed("running");
  refresher.Changed("ended");
  refresher.Ended("ended");
  refresher.Ended("never-changed");  // its end batch held no span
  ASSERT_TRUE(refresher.WaitEnded(2, absl::Seconds(30)));
  // "running" still waits for its hour.
  EXPECT_EQ(refresher.counters().waiting, 1);
  EXPECT_EQ(calls.Get(), (std::vector<std::string>{"ended", "never-changed"}));
  EXPECT_FALSE(refresher.WaitIdle(absl::ZeroDuration()));
}

TEST(JobRefresherTest, AChangeAfterTheEndWaitsToBeQuietAgain) {
  Calls calls;
  Gate gate;
  JobRefresher refresher(calls.Recorder(&gate), absl::Hours(1),
                         absl::ZeroDuration());
  refresher.Ended("first");
  gate.WaitStarted();
  // While the thread is busy: "late" ends, then a batch of it arrives
  // after all (a process that ended early, others still running).
  refresher.Ended("late");
  refresher.Changed("late");
  gate.Open();
  // "late" waits its hour: no second refresh comes (a wrong one would
  // follow "first" at once; 200 ms bound the look for it).
  ASSERT_TRUE(refresher.WaitEnded(1, absl::Seconds(30)));
  EXPECT_FALSE(calls.WaitFor(2, absl::Milliseconds(200)));
  EXPECT_EQ(calls.Get(), (std::vector<std::string>{"first"}));
  EXPECT_EQ(refresher.counters().waiting, 1);
}

TEST(JobRefresherTest, AnEndedJobIsRefreshedWholeWithNoSummariesPassFirst) {
  Calls calls;
  Gate gate;
  // Summaries are due 1 ns after a change: "j" would get a summaries pass
  // before its whole refresh if its end did not make it whole at once.
  JobRefresher refresher(calls.Recorder(&gate), absl::Hours(1),
                         absl::Nanoseconds(1));
  refresher.Ended("first");
  gate.WaitStarted();
  refresher.Changed("j");
  refresher.Ended("j");
  gate.Open();
  ASSERT_TRUE(refresher.WaitIdle(absl::Seconds(30)));
  EXPECT_EQ(calls.Get(), (std::vector<std::string>{"first", "j"}));
}

TEST(JobRefresherTest, AJobStillRunningHasItsSummariesMadeThenWhole) {
  Calls calls;
  JobRefresher refresher(calls.Recorder(), absl::Seconds(2),
                         absl::Milliseconds(50));
  // Keeps changing (more often than every 2 s) until a summaries refresh
  // has run, then stops: the last refresh is whole.
  for (int i = 0; i < 2000; ++i) {
    refresher.Changed("running");
    if (calls.WaitFor(1, absl::Milliseconds(10))) break;
  }
  ASSERT_TRUE(refresher.WaitIdle(absl::Seconds(30)));
  const std::vector<std::string> got = calls.Get();
  ASSERT_GE(got.size(), 2u);
  for (size_t i = 0; i + 1 < got.size(); ++i) {
    EXPECT_EQ(got[i], "running/summaries") << i;
  }
  EXPECT_EQ(got.back(), "running");
}

TEST(JobRefresherTest, TheJobsWaitingAreBounded) {
  Calls calls;
  Gate gate;
  JobRefresher refresher(calls.Recorder(&gate), absl::ZeroDuration(),
                         absl::ZeroDuration(), /*max_jobs=*/2);
  refresher.Changed("first");
  gate.WaitStarted();
  // "first" is being refreshed: two may wait, the third is dropped.
  refresher.Changed("b");
  refresher.Changed("c");
  refresher.Changed("d");
  RefreshCounters counters = refresher.counters();
  EXPECT_EQ(counters.waiting, 3);  // "first" too
  EXPECT_EQ(counters.dropped, 1);
  gate.Open();
  ASSERT_TRUE(refresher.WaitIdle(absl::Seconds(30)));
  EXPECT_EQ(calls.Get(), (std::vector<std::string>{"first", "b", "c"}));
  counters = refresher.counters();
  EXPECT_EQ(counters.refreshed, 3);
  EXPECT_EQ(counters.dropped, 1);
}

TEST(JobRefresherTest, AFailedRefreshIsCountedAndTheNextRuns) {
  Calls calls;
  JobRefresher refresher(
      [&](const std::string& job, bool whole,
          const std::atomic<bool>&) -> absl::Status {
        if (job == "bad") return absl::ResourceExhaustedError("too large");
        return calls.Record(job, whole);
      },
      absl::ZeroDuration(), absl::ZeroDuration());
  refresher.Changed("bad");
  ASSERT_TRUE(refresher.WaitIdle(absl::Seconds(30)));
  refresher.Changed("good");
  ASSERT_TRUE(refresher.WaitIdle(absl::Seconds(30)));
  EXPECT_EQ(calls.Get(), (std::vector<std::string>{"good"}));
  const RefreshCounters counters = refresher.counters();
  EXPECT_EQ(counters.refreshed, 1);
  EXPECT_EQ(counters.failed, 1);
}

TEST(JobRefresherTest, ShutdownDropsWhatWaits) {
  Calls calls;
  JobRefresher refresher(calls.Recorder(), absl::Hours(1),
                         absl::ZeroDuration());
  refresher.Changed("later");
  refresher.Shutdown();
  refresher.Changed("after");  // ignored
  EXPECT_EQ(calls.Size(), 0u);
  EXPECT_EQ(refresher.counters().waiting, 0);
  EXPECT_TRUE(refresher.WaitIdle(absl::ZeroDuration()));
}

TEST(JobRefresherTest, ShutdownStopsTheRefreshInProgress) {
  absl::Notification started;
  std::atomic<bool> saw_cancel{false};
  JobRefresher refresher(
      [&](const std::string& /*job*/, bool /*whole*/,
          const std::atomic<bool>& cancel) -> absl::Status {
        started.Notify();
        // A refresh that would run for ever but checks `cancel`, as
        // QueryService::Refresh does between blocks and spans.
        while (!cancel.load()) std::this_thread::yield();
        saw_cancel = true;
        return absl::CancelledError("stopped");
      },
      absl::ZeroDuration(), absl::ZeroDuration());
  refresher.Changed("long");
  started.WaitForNotification();
  refresher.Shutdown();  // returns: the refresh saw cancel and returned
  EXPECT_TRUE(saw_cancel);
  const RefreshCounters counters = refresher.counters();
  EXPECT_EQ(counters.refreshed, 0);
  EXPECT_EQ(counters.failed, 0);  // stopped, not failed
  EXPECT_EQ(counters.waiting, 0);
  EXPECT_TRUE(refresher.WaitIdle(absl::ZeroDuration()));
}

}  // namespace
}  // namespace meridian
