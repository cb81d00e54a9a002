// MPI capture end to end (tests/mpi_capture_fixture.h): `meridian replay`'s
// predictions against real jobs without their straggler or their delay
// (tests/replay_job.cc). Wall-clock step times: the target runs alone.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "testing/runfile.h"
#include "tests/mpi_capture_fixture.h"

namespace meridian {
namespace mpi_capture {
namespace {

// `meridian replay --job JOB FLAGS --json`, parsed.
google::protobuf::Struct ReplayOf(const std::string& address,
                                  const std::map<std::string, std::string>& env,
                                  const std::string& job,
                                  const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {Runfile("cli/meridian"),
                                   "--collector",
                                   address,
                                   "replay",
                                   "--job",
                                   job,
                                   "--json"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  Child child = Spawn(argv, env, /*merge_stderr=*/false);
  const std::string json = child.ReadAll();
  EXPECT_EQ(child.Wait(), 0) << json;
  google::protobuf::Struct parsed;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok())
      << json;
  return parsed;
}

double Field(const google::protobuf::Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  return it == s.fields().end() ? -1 : it->second.number_value();
}

// The median over a replay's steps of KEY ("measured_ns", "predicted_ns").
double MedianStep(const google::protobuf::Struct& replay,
                  const std::string& key) {
  std::vector<double> values;
  auto it = replay.fields().find("steps");
  if (it == replay.fields().end()) return -1;
  for (const auto& step : it->second.list_value().values()) {
    values.push_back(Field(step.struct_value(), key));
  }
  if (values.empty()) return -1;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Prediction against reality (docs/analysis.md, "Replay"): three real jobs
// of 2 ranks and 30 steps of compute 8 ms, pack 1 ms and an Allreduce:
// "slow", where rank 1 computes 8 ms more; "even", without; "delay", where
// pack takes 6 ms. Over steps 2 to 29 (the first ones include start-up):
//   - each replayed unchanged reproduces its measured time within 1 %, and
//     so does each step of "slow";
//   - "slow" with --rank-like 1=0 predicts "even" within 5 % a step (the
//     median step) and within 10 % over the window;
//   - "delay" with --scale pack=F (F = 1 / 6) predicts "even" the same.
// Wall-clock step times: the test runs alone (replay_mpi_test, exclusive),
// but the jobs are three runs on a shared machine, and a few steps of one
// of them can be descheduled (CI runs saw a window 7 % and 40 % over its
// steps' median), which no replay of another run can predict. So the three
// are run again, at most 5 times in all, until each one's window is within
// 5 % of 28 of its median steps (an undisturbed run), and that is printed.
TEST_F(MpiCaptureTest, ReplayPredictsTheJobWithoutTheStragglerOrTheDelay) {
  StartCollector();
  Child agent = StartAgent();
  // A waiting rank yields its core rather than spinning in the Allreduce.
  auto job = [&](const char* slow_us, const char* pack_us) {
    return std::vector<std::string>{"mpirun",
                                    "--allow-run-as-root",
                                    "--oversubscribe",
                                    "--timeout",
                                    "120",
                                    "--mca",
                                    "mpi_yield_when_idle",
                                    "1",
                                    "-np",
                                    "2",
                                    Runfile("tests/replay_job"),
                                    "30",
                                    "8000",
                                    "1",
                                    slow_us,
                                    pack_us};
  };
  const std::vector<std::string> window = {"--steps", "2:29"};
  std::map<std::string, google::protobuf::Struct> same;
  std::map<std::string, std::string> job_of;  // "slow" -> its job's name
  for (int attempt = 1; attempt <= 5; ++attempt) {
    const std::string suffix =
        attempt == 1 ? "" : "-" + std::to_string(attempt);
    for (const char* name : {"slow", "even", "delay"}) {
      job_of[name] = std::string("replay-") + name + suffix;
    }
    ASSERT_TRUE(Traced(job_of["slow"], job("8000", "1000")));
    ASSERT_TRUE(Traced(job_of["even"], job("0", "1000")));
    ASSERT_TRUE(Traced(job_of["delay"], job("0", "6000")));
    bool undisturbed = true;
    for (const char* name : {"slow", "even", "delay"}) {
      same[name] = ReplayOf(address_, env_, job_of[name], window);
      const double off = Field(same[name], "measured_ns") /
                         (28 * MedianStep(same[name], "measured_ns"));
      if (off > 1.05) {
        printf("attempt %d: %s's window is %.1f%% over its median steps\n",
               attempt, name, 100 * (off - 1));
        undisturbed = false;
      }
    }
    if (undisturbed) break;
  }
  StopAgent(agent);
  for (const char* name : {"slow", "even", "delay"}) {
    const double measured = Field(same[name], "measured_ns");
    EXPECT_GT(measured, 28 * 9e6) << name;
    EXPECT_NEAR(Field(same[name], "predicted_ns") / measured, 1.0, 0.01)
        << name;
  }
  for (const auto& step :
       same["slow"].fields().at("steps").list_value().values()) {
    const auto& s = step.struct_value();
    EXPECT_NEAR(Field(s, "predicted_ns") / Field(s, "measured_ns"), 1.0, 0.01)
        << "step " << Field(s, "step");
  }
  const double even = Field(same["even"], "measured_ns");
  // The straggler is real: "slow" takes 8 ms more a step.
  EXPECT_GT(Field(same["slow"], "measured_ns"), 1.5 * even);

  std::vector<std::string> flags = window;
  flags.insert(flags.end(), {"--rank-like", "1=0"});
  const google::protobuf::Struct fixed =
      ReplayOf(address_, env_, job_of["slow"], flags);
  flags = window;
  flags.insert(flags.end(), {"--scale", "pack=0.1666667"});
  const google::protobuf::Struct shorter =
      ReplayOf(address_, env_, job_of["delay"], flags);
  const double even_step = MedianStep(same["even"], "measured_ns");
  EXPECT_GT(even_step, 9e6);
  EXPECT_NEAR(MedianStep(fixed, "predicted_ns") / even_step, 1.0, 0.05);
  EXPECT_NEAR(MedianStep(shorter, "predicted_ns") / even_step, 1.0, 0.05);
  EXPECT_NEAR(Field(fixed, "predicted_ns") / even, 1.0, 0.10);
  EXPECT_NEAR(Field(shorter, "predicted_ns") / even, 1.0, 0.10);
  printf(
      "replay figures (steps 2..29, ms): even measured %.3f; slow measured "
      "%.3f, unchanged %.3f, --rank-like 1=0 %.3f (%.2f%% off even); delay "
      "measured %.3f, unchanged %.3f, --scale pack %.3f (%.2f%% off even)\n",
      even / 1e6, Field(same["slow"], "measured_ns") / 1e6,
      Field(same["slow"], "predicted_ns") / 1e6,
      Field(fixed, "predicted_ns") / 1e6,
      100 * (Field(fixed, "predicted_ns") / even - 1),
      Field(same["delay"], "measured_ns") / 1e6,
      Field(same["delay"], "predicted_ns") / 1e6,
      Field(shorter, "predicted_ns") / 1e6,
      100 * (Field(shorter, "predicted_ns") / even - 1));
}

}  // namespace
}  // namespace mpi_capture
}  // namespace meridian
