// MPI capture end to end (tests/mpi_capture_fixture.h): what a process
// records besides its MPI calls and when. The NCCL plugin, CUPTI-like bursts,
// thread churn and MPI_THREAD_MULTIPLE, the Python binding, step windows and
// on-demand `meridian trace`.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "meridian/v1/span.pb.h"
#include "store/store.h"
#include "testing/runfile.h"
#include "tests/mpi_capture_fixture.h"

namespace meridian {
namespace mpi_capture {
namespace {

// NCCL's profiler plugin under `meridian run -- mpirun`, driven by a
// stand-in for NCCL (tests/nccl_fake_job.cc): each collective arrives as
// its GPU execution on the communicator's GPU track, matched across ranks
// by comm hash and seq, and its launch on the calling thread.
TEST_F(MpiCaptureTest, NcclPluginRecordsGpuExecutionAndLaunchOfEachCollective) {
  StartCollector();
  Child agent = StartAgent();
  std::vector<std::string> mpirun = Mpirun({Runfile("tests/nccl_fake_job")});
  *(std::find(mpirun.begin(), mpirun.end(), "-np") + 1) = "2";
  Child run = Spawn(MeridianRun("nccl", mpirun), env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "libnccl-profiler-meridian.so")) << out;
  const std::vector<Row> rows = ReadJob(db_, "nccl");
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE(absl::StrCat("rank ", rank));
    const std::vector<Row> exec = Select(rows, rank, "AllReduce");
    const std::vector<Row> launch = Select(rows, rank, "ncclAllReduce");
    ASSERT_EQ(exec.size(), 3u);
    ASSERT_EQ(launch.size(), 3u);
    std::map<uint64_t, uint64_t> correlation_of_seq;
    for (const Row& r : exec) {
      EXPECT_EQ(r.category, v1::CATEGORY_NCCL);
      EXPECT_EQ(r.track_kind, v1::TRACK_KIND_GPU_STREAM);
      EXPECT_EQ(r.track, "GPU NCCL 0000000000005eed");
      EXPECT_EQ(r.span.comm, 0x5eedu);
      EXPECT_EQ(r.span.comm_size, 2u);
      EXPECT_EQ(r.span.bytes, 1024);
      // 200 us on the GPU clock; the agent puts each end through the node's
      // time map (agent/probe_session.cc says why), so a length may round
      // to 1 ns less or more.
      EXPECT_NEAR(r.span.dur_ns, 200000, 1);
      ASSERT_TRUE(r.span.seq.has_value());
      ASSERT_TRUE(r.span.step.has_value());
      EXPECT_EQ(static_cast<uint64_t>(*r.span.step), *r.span.seq);
      correlation_of_seq[*r.span.seq] = r.span.correlation;
      std::map<std::string, std::string> args;
      for (const StoredArg& a : r.span.args) {
        args[a.key] =
            a.type == StoredArg::Type::kInt ? absl::StrCat(a.int_value) : a.str;
      }
      EXPECT_EQ(args, (std::map<std::string, std::string>{
                          {"algo", "RING"},
                          {"proto", "SIMPLE"},
                          {"channels", "2"},
                          {"count", "256"},
                          {"datatype", "ncclFloat32"},
                          {"rank", absl::StrCat(rank)}}));
    }
    EXPECT_EQ(correlation_of_seq.size(), 3u);  // seq 0, 1, 2
    std::set<uint64_t> launched;
    for (const Row& r : launch) {
      EXPECT_EQ(r.category, v1::CATEGORY_CUDA_RUNTIME);
      EXPECT_EQ(r.track_kind, v1::TRACK_KIND_THREAD);
      launched.insert(r.span.correlation);
    }
    std::set<uint64_t> executed;
    for (const auto& [seq, correlation] : correlation_of_seq) {
      executed.insert(correlation);
    }
    EXPECT_EQ(launched, executed);
  }
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

// CUPTI hands over GPU activity in bursts on a thread of its own, which
// waits for room in its ring (CaptureSink::AwaitRoom) rather than dropping
// (capture/cupti/cuda_injection.cc); a ring reaching half full wakes the
// agent (DrainSoon). With rings of 64 records and an agent whose periodic
// read is 60 s away, 50 bursts of 64 (tests/capture_burst_job.cc) all
// arrive, none dropped: each burst is read because it woke the agent.
// (And the 4 resource use counters every process records at exit.)
TEST_F(MpiCaptureTest, CaptureBurstsWakeTheAgentAndWaitForRoom) {
  StartCollector();
  Child agent = StartAgent({"--drain-ms", "60000", "--max-drain-ms", "60000"});
  env_["MERIDIAN_RING_RECORDS"] = "64";
  Child run = Spawn(
      MeridianRun("burst", {Runfile("tests/capture_burst_job"), "50", "64"}),
      env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "capture_burst_job: 3200 spans")) << out;
  EXPECT_TRUE(absl::StrContains(out,
                                "3204 spans received, 3204 sent, "
                                "0 spooled, 0 dropped"))
      << out;
  EXPECT_EQ(Select(ReadJob(db_, "burst"), -1, "burst").size(), 3200u);
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

// A process starts and ends 10,000 threads over its life, 16 at a time,
// each recording 4 spans: a process has 64 rings, so every thread after
// the 64th records into a ring an exited thread gave back. Every span
// arrives, on its own thread's track.
TEST_F(MpiCaptureTest, TenThousandShortThreadsAllRecordOnTheirOwnTracks) {
  StartCollector();
  Child agent = StartAgent();
  Child run = Spawn(MeridianRun("churn", {Runfile("tests/thread_churn_job"),
                                          "10000", "16", "4"}),
                    env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out.substr(out.size() > 2000 ? out.size() - 2000
                                                           : 0);
  EXPECT_TRUE(absl::StrContains(out, "thread_churn_job: 40000 spans\n"));
  // And the resource use counters of the main thread, at exit.
  EXPECT_TRUE(absl::StrContains(out,
                                "40004 spans received, 40004 sent, "
                                "0 spooled, 0 dropped"))
      << out.substr(out.size() > 2000 ? out.size() - 2000 : 0);
  std::map<int64_t, std::string> track_of_thread;
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    int number, tid;
    if (sscanf(std::string(line).c_str(), "thread %d %d", &number, &tid) == 2) {
      track_of_thread[number] = absl::StrCat("thread ", tid);
    }
  }
  ASSERT_EQ(track_of_thread.size(), 10000u);
  std::map<int64_t, std::set<uint64_t>> seqs;  // thread number -> spans
  int misfiled = 0;
  for (const Row& row : Select(ReadJob(db_, "churn"), -1, "churn")) {
    const int64_t number = row.span.bytes;
    ASSERT_TRUE(track_of_thread.count(number)) << number;
    const uint64_t seq = row.span.seq.value_or(UINT64_MAX);
    EXPECT_TRUE(seqs[number].insert(seq).second)
        << "thread " << number << " span " << seq << " twice";
    EXPECT_EQ(row.track_kind, v1::TRACK_KIND_THREAD);
    if (row.track != track_of_thread[number] && misfiled++ < 5) {
      ADD_FAILURE() << "thread " << number << "'s span on " << row.track
                    << ", not " << track_of_thread[number];
    }
  }
  EXPECT_EQ(misfiled, 0);
  ASSERT_EQ(seqs.size(), 10000u);
  for (const auto& [number, spans] : seqs) {
    ASSERT_EQ(spans, (std::set<uint64_t>{0, 1, 2, 3})) << number;
  }
  StopAgent(agent);
}

// tests/mpi_threads.cc under MPI_THREAD_MULTIPLE: every MPI_Isend and
// MPI_Irecv record names its own request's tag, bytes and peer (world
// ranks), each (rank, call, tag) exactly once.
void ExpectEveryRequestItsOwn(const std::vector<Row>& rows,
                              const std::vector<int>& threads, int iterations,
                              const std::string& job) {
  std::map<std::tuple<int, std::string, int>, int> seen;
  int wrong = 0;
  for (const Row& row : rows) {
    if (row.name != "MPI_Isend" && row.name != "MPI_Irecv") continue;
    const bool send = row.name == "MPI_Isend";
    const int tag = row.span.tag.value_or(-1);
    const int thread = tag / 100000;
    const int i = tag % 100000;
    const int64_t bytes = 4 * (1 + (7 * i + thread) % 61);
    const int peer = send ? (row.rank + 1) % 4 : (row.rank + 3) % 4;
    if ((row.span.bytes != bytes || row.span.peer.value_or(-1) != peer) &&
        wrong++ < 5) {
      ADD_FAILURE() << job << " rank " << row.rank << " " << row.name << " tag "
                    << tag << ": " << row.span.bytes << " bytes, peer "
                    << row.span.peer.value_or(-1) << "; its request had "
                    << bytes << " bytes, peer " << peer;
    }
    ++seen[{row.rank, row.name, tag}];
  }
  EXPECT_EQ(wrong, 0) << job;
  int missing = 0;
  for (int rank = 0; rank < 4; ++rank) {
    for (const char* name : {"MPI_Isend", "MPI_Irecv"}) {
      for (int thread : threads) {
        for (int i = 0; i < iterations; ++i) {
          const int tag = thread * 100000 + i;
          auto it = seen.find({rank, name, tag});
          const int times = it == seen.end() ? 0 : it->second;
          if (times != 1 && missing++ < 5) {
            ADD_FAILURE() << job << " rank " << rank << " " << name << " tag "
                          << tag << " recorded " << times << " times";
          }
        }
      }
    }
  }
  EXPECT_EQ(missing, 0) << job;
  EXPECT_EQ(seen.size(), 4u * 2 * threads.size() * iterations) << job;
}

TEST_F(MpiCaptureTest, ThreadMultipleRequestsKeepTheirOwnRecords) {
  StartCollector();
  Child agent = StartAgent();
  constexpr int kIterations = 3000;
  ASSERT_TRUE(Traced("threads-p2p", Mpirun({Runfile("tests/mpi_threads"), "p2p",
                                            std::to_string(kIterations)})));
  ExpectEveryRequestItsOwn(ReadJob(db_, "threads-p2p"), {0, 1, 2}, kIterations,
                           "p2p");
  // Wildcard receives on communicators freed while they are pending, the
  // ranks' order reversed every other iteration: the source is translated
  // with the communicator the receive was posted on.
  constexpr int kSplits = 300;
  ASSERT_TRUE(Traced("threads-wildcard",
                     Mpirun({Runfile("tests/mpi_threads"), "wildcard",
                             std::to_string(kSplits)})));
  ExpectEveryRequestItsOwn(ReadJob(db_, "threads-wildcard"), {0, 1, 2, 3},
                           kSplits, "wildcard");
  StopAgent(agent);
}

TEST_F(MpiCaptureTest, PythonBindingRecordsStepsPhasesQueuesAndCounters) {
  StartCollector();
  env_["MERIDIAN_RANK"] = "3";
  Child run = Spawn(
      MeridianRun("py", {"python3", Runfile("tests/probe_binding_test.py")}),
      env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  const std::vector<Row> rows = ReadJob(db_, "py");
  ASSERT_EQ(rows.size(), 15u);  // 3 steps x (step, forward, queue, mark, loss)
  for (int s = 0; s < 3; ++s) {
    std::vector<const Row*> of_step;
    for (const Row& r : rows) {
      EXPECT_EQ(r.rank, 3);
      if (r.span.step == s) of_step.push_back(&r);
    }
    ASSERT_EQ(of_step.size(), 5u);
  }
  for (const Row& r : Select(rows, 3, "NEGOTIATE_ALLREDUCE")) {
    EXPECT_EQ(r.track, "grad.fc1");
    EXPECT_EQ(r.track_kind, v1::TRACK_KIND_QUEUE);
    EXPECT_EQ(r.span.dur_ns, 1000);
    EXPECT_EQ(r.span.bytes, 4096);
    EXPECT_EQ(r.span.partition, 2);
  }
  const std::vector<Row> loss = Select(rows, 3, "loss");
  ASSERT_EQ(loss.size(), 3u);
  EXPECT_EQ(loss[2].span.value, 3.0);
  EXPECT_EQ(Select(rows, 3, "mark")[0].kind, v1::SPAN_KIND_INSTANT);
  EXPECT_EQ(Select(rows, 3, "forward").size(), 3u);
}

// The steps a record belongs to, one entry per record.
std::multiset<int64_t> Steps(const std::vector<Row>& rows) {
  std::multiset<int64_t> steps;
  for (const Row& r : rows) steps.insert(r.span.step.value_or(-100));
  return steps;
}

TEST_F(MpiCaptureTest, AStepWindowFromTheEnvironmentRecordsOnlyThoseSteps) {
  StartCollector();
  env_["MERIDIAN_START_STEP"] = "1";
  env_["MERIDIAN_END_STEP"] = "1";
  Child run =
      Spawn(MeridianRun("window",
                        {"python3", Runfile("tests/probe_binding_test.py")}),
            env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  EXPECT_EQ(Steps(ReadJob(db_, "window")),
            (std::multiset<int64_t>{1, 1, 1, 1, 1}));
}

// `meridian trace` reaches the agents of every node through the collector:
// two agents (nodes a and b), one on-demand process of the job on each,
// waiting (FIFOs) until the request has been made.
TEST_F(MpiCaptureTest, MeridianTraceRecordsTheNextStepsOfAnOnDemandJob) {
  StartCollector();
  std::vector<Child> agents, runs;
  for (const std::string node : {"a", "b"}) {
    const std::string dir = dir_ + "/" + node;
    ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
    ASSERT_EQ(mkfifo((dir + "/ready").c_str(), 0600), 0);
    ASSERT_EQ(mkfifo((dir + "/go").c_str(), 0600), 0);
    agents.push_back(
        Spawn({Runfile("agent/meridian-agent"), "--collector", address_,
               "--socket", dir + "/agent.sock", "--spool", dir + "/spool",
               "--node", node, "--control-poll-ms", "100"},
              env_, /*merge_stderr=*/false));
    ASSERT_TRUE(absl::StartsWith(agents.back().ReadLine(), "meridian-agent "));
    std::map<std::string, std::string> env = env_;
    env["MERIDIAN_AGENT_SOCKET"] = dir + "/agent.sock";
    env["MERIDIAN_TEST_FIFOS"] = dir;
    std::vector<std::string> argv = MeridianRun(
        "demand", {"python3", Runfile("tests/probe_binding_test.py")});
    argv.insert(argv.begin() + 4, "--on-demand");  // after "run"
    runs.push_back(Spawn(argv, env));
  }
  for (const std::string node : {"a", "b"}) {
    FILE* ready = fopen((dir_ + "/" + node + "/ready").c_str(), "r");
    char line[16];
    ASSERT_NE(fgets(line, sizeof(line), ready), nullptr);
    fclose(ready);
  }
  auto trace = [&](std::vector<std::string> args, int* code) {
    std::vector<std::string> argv = {Runfile("cli/meridian"), "--collector",
                                     address_, "trace"};
    argv.insert(argv.end(), args.begin(), args.end());
    Child child = Spawn(argv, env_);
    const std::string said = child.ReadAll();
    *code = child.Wait();
    return said;
  };
  // A job no agent serves: exit 1, naming how many agents answered. Asked
  // until both agents answer (each has polled the collector once).
  int code = 0;
  std::string said;
  do {
    said = trace({"--job", "nope", "--steps", "2"}, &code);
    ASSERT_EQ(code, 1) << said;
  } while (!absl::StrContains(said, "on the 2 agents that answered"));
  EXPECT_EQ(said,
            "meridian: trace: no process of job nope on the 2 agents that "
            "answered\n");

  said = trace({"--job", "demand", "--steps", "2"}, &code);
  ASSERT_EQ(code, 0) << said;
  EXPECT_EQ(said,
            "meridian trace: 2 processes of job demand on 2 nodes will record "
            "the next 2 steps\n  a: 1 process\n  b: 1 process\n");
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string node = i == 0 ? "a" : "b";
    FILE* go = fopen((dir_ + "/" + node + "/go").c_str(), "w");
    fputs("go\n", go);
    fclose(go);
    const std::string out = runs[i].ReadAll();
    ASSERT_EQ(runs[i].Wait(), 0) << out;
  }
  // Nothing before the request (step -1), steps 0 and 1, not step 2: on
  // both nodes.
  EXPECT_EQ(Steps(ReadJob(db_, "demand")),
            (std::multiset<int64_t>{0, 0, 0, 0, 0, 1, 1, 1, 1, 1,
                                    0, 0, 0, 0, 0, 1, 1, 1, 1, 1}));

  // --local asks only the agent on $MERIDIAN_AGENT_SOCKET, no collector.
  std::map<std::string, std::string> env = env_;
  env["MERIDIAN_AGENT_SOCKET"] = dir_ + "/a/agent.sock";
  Child local = Spawn({Runfile("cli/meridian"), "--collector", "127.0.0.1:1",
                       "trace", "--local", "--job", "nope", "--steps", "2"},
                      env);
  EXPECT_EQ(local.ReadAll(),
            "meridian trace: 0 processes of job nope on this node will record "
            "the next 2 steps\n");
  EXPECT_EQ(local.Wait(), 1);
  // Without --local, an unreachable collector is an error that says so.
  Child away = Spawn({Runfile("cli/meridian"), "--collector", "127.0.0.1:1",
                      "trace", "--job", "demand", "--steps", "2"},
                     env_);
  const std::string away_said = away.ReadAll();
  EXPECT_EQ(away.Wait(), 1);
  EXPECT_TRUE(absl::StrContains(away_said,
                                "cannot reach the collector at "
                                "127.0.0.1:1"))
      << away_said;
  for (Child& agent : agents) {
    kill(agent.pid, SIGTERM);
    agent.Wait();
  }
}

// `meridian trace --seconds` opening while a step runs: that step's spans
// from the window on are recorded, tagged with it, but not its "step"
// marker (the step is partial), so `meridian steps` leaves it out; the
// steps after it are whole.
TEST_F(MpiCaptureTest, MeridianTraceSecondsLeavesOutTheStepItOpenedIn) {
  StartCollector();
  Child agent = StartAgent({"--control-poll-ms", "100", "--node", "n1"});
  ASSERT_EQ(mkfifo((dir_ + "/ready").c_str(), 0600), 0);
  ASSERT_EQ(mkfifo((dir_ + "/go").c_str(), 0600), 0);
  std::map<std::string, std::string> env = env_;
  env["MERIDIAN_TEST_FIFOS"] = dir_;
  env["MERIDIAN_TEST_IN_STEP"] = "1";
  std::vector<std::string> argv = MeridianRun(
      "seconds", {"python3", Runfile("tests/probe_binding_test.py")});
  argv.insert(argv.begin() + 4, "--on-demand");  // after "run"
  Child run = Spawn(argv, env);
  FILE* ready = fopen((dir_ + "/ready").c_str(), "r");
  char line[16];
  ASSERT_NE(fgets(line, sizeof(line), ready), nullptr);
  fclose(ready);
  // Asked until the agent answers with the process (it polls the
  // collector every 100 ms).
  std::string said;
  int code = 1;
  while (code != 0) {
    Child trace = Spawn({Runfile("cli/meridian"), "--collector", address_,
                         "trace", "--job", "seconds", "--seconds", "600"},
                        env_);
    said = trace.ReadAll();
    code = trace.Wait();
    ASSERT_TRUE(code == 0 || absl::StrContains(said, "no process of job"))
        << said;
  }
  EXPECT_EQ(said,
            "meridian trace: 1 process of job seconds on 1 node will record "
            "for 600 seconds\n  n1: 1 process\n");
  FILE* go = fopen((dir_ + "/go").c_str(), "w");
  fputs("go\n", go);
  fclose(go);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  std::multiset<int64_t> markers, late;
  for (const Row& r : ReadJob(db_, "seconds")) {
    if (r.name == "step") markers.insert(r.span.step.value_or(-100));
    if (r.name == "late") late.insert(r.span.step.value_or(-100));
  }
  EXPECT_EQ(markers, (std::multiset<int64_t>{0, 1, 2}));
  EXPECT_EQ(late, (std::multiset<int64_t>{-1}));
  Child steps = Spawn({Runfile("cli/meridian"), "--collector", address_,
                       "steps", "--job", "seconds", "--json"},
                      env_, /*merge_stderr=*/false);
  const std::string json = steps.ReadAll();
  ASSERT_EQ(steps.Wait(), 0) << json;
  EXPECT_FALSE(absl::StrContains(json, "\"step\":-1")) << json;
  EXPECT_TRUE(absl::StrContains(json, "\"step\":2")) << json;
  StopAgent(agent);
}

}  // namespace
}  // namespace mpi_capture
}  // namespace meridian
