// MPI capture end to end (tests/mpi_capture_fixture.h): agents, launchers and
// faults. Skewed agents of two nodes, `meridian run` inside mpirun, a killed
// rank or agent, the collector down, a node without an agent, an untraced
// rank, spans lost to full rings and a reused job name.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "testing/runfile.h"
#include "tests/collector_process.h"
#include "tests/mpi_capture_fixture.h"

namespace meridian {
namespace mpi_capture {
namespace {

// In a Chrome trace: how many (collective instance, rank) pairs end before
// the instance's last rank entered, for the collectives every rank's result
// depends on (Allreduce, Barrier, Alltoallv, Iallreduce), and how many
// instances there are.
int CollectiveViolations(const std::string& path, int* instances,
                         std::string* which = nullptr) {
  std::string json;
  {
    FILE* f = fopen(path.c_str(), "rb");
    EXPECT_NE(f, nullptr) << path;
    if (f == nullptr) return -1;
    char buffer[65536];
    size_t n;
    while ((n = fread(buffer, 1, sizeof(buffer), f)) > 0)
      json.append(buffer, n);
    fclose(f);
  }
  google::protobuf::Struct trace;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &trace).ok());
  // Times in ns: the trace writes exact ns as microseconds with 3
  // decimals, and adding those as doubles could put an end 1 ulp before a
  // start it equals.
  auto ns = [](const google::protobuf::Value& us) {
    return std::llround(us.number_value() * 1000);
  };
  std::map<std::pair<std::string, double>,
           std::vector<std::pair<int64_t, int64_t>>>
      members;  // (comm, seq) -> (start, end) ns
  std::map<std::pair<std::string, double>, std::string> names;
  for (const auto& v : trace.fields().at("traceEvents").list_value().values()) {
    const auto& e = v.struct_value().fields();
    const std::string name = e.at("name").string_value();
    if (name != "MPI_Allreduce" && name != "MPI_Barrier" &&
        name != "MPI_Alltoallv" && name != "MPI_Iallreduce") {
      continue;
    }
    const auto& args = e.at("args").struct_value().fields();
    const int64_t start = ns(e.at("ts"));
    const std::pair<std::string, double> key = {args.at("comm").string_value(),
                                                args.at("seq").number_value()};
    members[key].push_back({start, start + ns(e.at("dur"))});
    names[key] = name;
  }
  int violations = 0;
  for (const auto& [key, spans] : members) {
    int64_t last_start = 0;
    for (const auto& [start, end] : spans)
      last_start = std::max(last_start, start);
    for (const auto& [start, end] : spans) {
      if (end >= last_start) continue;
      ++violations;
      if (which != nullptr) {
        absl::StrAppend(which, names[key], " comm ", key.first, " seq ",
                        key.second, ": ends at ", end, " ns, before ",
                        last_start, " ns; ");
      }
    }
  }
  *instances = static_cast<int>(members.size());
  return violations;
}

// Two agents on this machine with opposite skews (+20 ms, +50 ppm and
// -20 ms, -50 ppm) serve one 4-rank job, ranks 0-1 and 2-3: raw, the merged
// trace has collectives ending before their last rank entered; on the
// collector's clock it has none.
TEST_F(MpiCaptureTest, TwoSkewedAgentsMergeIntoOneTimelineWithoutViolations) {
  StartCollector();
  std::vector<Child> agents;
  const std::vector<std::vector<std::string>> skews = {
      {"node-a", "20000000", "50"}, {"node-b", "-20000000", "-50"}};
  for (const auto& skew : skews) {
    agents.push_back(
        Spawn({Runfile("agent/meridian-agent"), "--collector", address_,
               "--socket", dir_ + "/" + skew[0] + ".sock", "--spool",
               dir_ + "/" + skew[0], "--node", skew[0], "--clock-offset-ns",
               skew[1], "--clock-drift-ppm", skew[2], "--clock-sync-ms", "100",
               "--node-counters-ms", "0"},  // spans counted exactly
              env_, /*merge_stderr=*/false));
    ASSERT_TRUE(absl::StartsWith(agents.back().ReadLine(), "meridian-agent "));
  }
  // mpirun's MPMD form: each half of the ranks reaches its own agent.
  std::vector<std::string> argv = {"mpirun", "--allow-run-as-root",
                                   "--oversubscribe", "--timeout", "120"};
  for (const auto& skew : skews) {
    if (argv.size() > 5) argv.push_back(":");
    for (const std::string& a :
         {std::string("-np"), std::string("2"), std::string("env"),
          "MERIDIAN_AGENT_SOCKET=" + dir_ + "/" + skew[0] + ".sock",
          Runfile("cli/meridian"), std::string("--collector"), address_,
          std::string("run"), std::string("--job"), std::string("skewed"),
          std::string("--"), Runfile("tests/mpi_known")}) {
      argv.push_back(a);
    }
  }
  Child run = Spawn(argv, env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  ExpectKnownSequence(ReadJob(db_, "skewed"));

  Child clocks = Spawn({Runfile("cli/meridian"), "--collector", address_,
                        "clocks", "--job", "skewed", "--json"},
                       env_, /*merge_stderr=*/false);
  const std::string json = clocks.ReadAll();
  ASSERT_EQ(clocks.Wait(), 0) << json;
  google::protobuf::Struct report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &report).ok())
      << json;
  const auto& nodes = report.fields().at("nodes").list_value().values();
  ASSERT_EQ(nodes.size(), 2) << json;
  for (int i = 0; i < 2; ++i) {
    const auto& node = nodes[i].struct_value().fields();
    EXPECT_EQ(node.at("node").string_value(), skews[i][0]);
    const auto& ranks = node.at("ranks").list_value().values();
    ASSERT_EQ(ranks.size(), 2);
    EXPECT_EQ(ranks[0].number_value(), 2 * i);
    EXPECT_EQ(ranks[1].number_value(), 2 * i + 1);
    EXPECT_GE(node.at("models").number_value(), 1);
    // The skew, found within a millisecond (loopback probes, 20 ms skews).
    const double skew_ns = std::stod(skews[i][1]);
    EXPECT_NEAR(node.at("offset_ns").number_value(), skew_ns, 1e6) << json;
  }
  EXPECT_EQ(report.fields().at("violations_after").number_value(), 0) << json;

  int instances = 0, raw_instances = 0;
  for (const char* flag : {"--raw-clock", ""}) {
    std::vector<std::string> export_argv = {Runfile("cli/meridian"),
                                            "--collector",
                                            address_,
                                            "export",
                                            "--job",
                                            "skewed",
                                            "-o",
                                            dir_ + "/trace" + flag + ".json"};
    if (*flag) export_argv.push_back(flag);
    Child exported = Spawn(export_argv, env_);
    const std::string said = exported.ReadAll();
    ASSERT_EQ(exported.Wait(), 0) << said;
  }
  EXPECT_GT(
      CollectiveViolations(dir_ + "/trace--raw-clock.json", &raw_instances), 0);
  std::string which;
  EXPECT_EQ(CollectiveViolations(dir_ + "/trace.json", &instances, &which), 0)
      << which;
  // 5 Allreduce, Alltoallv and Iallreduce on the world, 1 Allreduce on each
  // half, the Barrier on the dup.
  EXPECT_EQ(instances, 10);
  EXPECT_EQ(raw_instances, 10);
  for (Child& agent : agents) {
    kill(agent.pid, SIGTERM);
    EXPECT_EQ(agent.Wait(), 0);
  }
}

TEST_F(MpiCaptureTest, RunInsideMpirunStartsOneAgentAndUsesTheLaunchersJob) {
  StartCollector();
  std::vector<std::string> inner = {
      Runfile("cli/meridian"),   "--collector", address_, "run", "--",
      Runfile("tests/mpi_known")};
  Child run = Spawn(Mpirun(inner), env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  // No agent was running: one was started and has exited since.
  const size_t at = out.find("meridian run: job ompi-");
  ASSERT_NE(at, std::string::npos) << out;
  const size_t begin = at + strlen("meridian run: job ");
  const std::string job =
      out.substr(begin, out.find_first_of(":\n", begin) - begin);
  ExpectKnownSequence(ReadJob(db_, job));
}

TEST_F(MpiCaptureTest, WhatAKilledRankRecordedArrives) {
  StartCollector();
  Child agent = StartAgent();
  Child run = Spawn(
      MeridianRun("killed", Mpirun({Runfile("tests/mpi_known"), "--kill-rank",
                                    "2", "--instants", "1000"})),
      env_);
  const std::string out = run.ReadAll();
  EXPECT_NE(run.Wait(), 0) << out;  // mpirun reports the killed rank
  const std::vector<Row> rows = ReadJob(db_, "killed");
  EXPECT_EQ(Select(rows, 2, "before-kill").size(), 1000u);
  EXPECT_EQ(Select(rows, 2, "MPI_Init").size(), 1u);
  kill(agent.pid, SIGTERM);
  agent.Wait();
}

TEST_F(MpiCaptureTest, AnAgentKilledMidJobLosesNothingAndDuplicatesNothing) {
  StartCollector();
  ASSERT_EQ(mkfifo((dir_ + "/ready").c_str(), 0600), 0);
  ASSERT_EQ(mkfifo((dir_ + "/go").c_str(), 0600), 0);
  Child first = StartAgent();
  Child run = Spawn(
      MeridianRun("restart", Mpirun({Runfile("tests/mpi_known"), "--pause",
                                     dir_, "--instants", "5000"})),
      env_);
  // Every rank has recorded phase A and rank 0 waits for us.
  FILE* ready = fopen((dir_ + "/ready").c_str(), "r");
  char line[16];
  ASSERT_NE(fgets(line, sizeof(line), ready), nullptr);
  fclose(ready);
  kill(first.pid, SIGKILL);
  first.Wait();
  Child second = StartAgent();  // same socket and spool
  FILE* go = fopen((dir_ + "/go").c_str(), "w");
  fputs("go\n", go);
  fclose(go);
  const std::string out = run.ReadAll();
  EXPECT_EQ(run.Wait(), 0) << out;
  EXPECT_EQ(Flush(), 0);
  const std::vector<Row> rows = ReadJob(db_, "restart");
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(absl::StrCat("rank ", rank));
    EXPECT_EQ(Select(rows, rank, "phase-a").size(), 5000u);
    EXPECT_EQ(Select(rows, rank, "phase-b").size(), 5000u);
    EXPECT_EQ(Select(rows, rank, "MPI_Barrier").size(), 2u);
  }
  EXPECT_EQ(rows.size(), 4u * (10000 + 4));  // + Init, 2 Barrier, Finalize
  kill(second.pid, SIGTERM);
  second.Wait();
}

TEST_F(MpiCaptureTest, CollectorDownDuringTheJobGetsEverythingOnceWhenBack) {
  StartCollector();
  const std::string address = address_;
  ASSERT_EQ(collector_->Terminate(), 0);
  collector_.reset();
  Child agent = StartAgent();
  Child run =
      Spawn(MeridianRun("offline", Mpirun({Runfile("tests/mpi_known")})), env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "unreachable; spans spooled in")) << out;
  EXPECT_FALSE(absl::StrContains(AgentStatus(), "\nspool writes 0\n"));
  StartCollector(address);  // the same address and store
  EXPECT_EQ(Flush(), 0);
  EXPECT_TRUE(absl::StrContains(AgentStatus(), "\nspooled 0\n"));
  ExpectKnownSequence(ReadJob(db_, "offline"));
  kill(agent.pid, SIGTERM);
  agent.Wait();
}

// `meridian jobs --json`'s entry for `job`.
google::protobuf::Struct JobEntry(const std::string& meridian,
                                  const std::string& address,
                                  const std::map<std::string, std::string>& env,
                                  const std::string& job) {
  Child jobs = Spawn({meridian, "--collector", address, "jobs", "--json"}, env,
                     /*merge_stderr=*/false);
  const std::string json = jobs.ReadAll();
  EXPECT_EQ(jobs.Wait(), 0) << json;
  google::protobuf::Struct all;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &all).ok())
      << json;
  for (const auto& entry : all.fields().at("jobs").list_value().values()) {
    if (entry.struct_value().fields().at("job").string_value() == job) {
      return entry.struct_value();
    }
  }
  ADD_FAILURE() << "no job " << job << " in " << json;
  return {};
}

// `meridian run -- mpirun` on a node whose agent it starts; ranks 2 and 3
// stand for another node (their own agent socket, no agent there): their
// probes start an agent for that node with the collector meridian run
// exported, once, and every rank's spans arrive.
TEST_F(MpiCaptureTest, ARankOnANodeWithoutAnAgentStartsOne) {
  StartCollector();
  const std::string other = dir_ + "/node-b/agent.sock";
  const std::string rank_script =
      "if [ \"$OMPI_COMM_WORLD_RANK\" -ge 2 ]; then "
      "export MERIDIAN_AGENT_SOCKET=" +
      other + "; fi; exec " + Runfile("tests/mpi_known");
  Child run =
      Spawn(MeridianRun("two-nodes", Mpirun({"sh", "-c", rank_script})), env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  EXPECT_TRUE(absl::StartsWith(out, "meridian run: job two-nodes\n")) << out;
  // Said by each rank that started one (both may: one serves, the other
  // exits as it finds the socket served).
  const std::string started = "meridian: no agent answers on " + other +
                              ": starting " + Runfile("agent/meridian-agent") +
                              " for collector " + address_ +
                              "; its log: " + dir_ + "/node-b/agent.log\n";
  const size_t at = out.find(started);
  ASSERT_NE(at, std::string::npos) << out;
  const size_t again = out.find(started, at + 1);
  EXPECT_TRUE(again == std::string::npos ||
              out.find(started, again + 1) == std::string::npos)
      << out;
  // That agent exits once its processes are gone and all is sent; if it
  // is still there, it is asked to deliver.
  Child flush = Spawn({Runfile("agent/meridian-agent"), "--flush", "--timeout",
                       "60", "--socket", other},
                      env_);
  const std::string flushed = flush.ReadAll();
  flush.Wait();
  EXPECT_TRUE(absl::StrContains(flushed, "state delivered") ||
              absl::StrContains(flushed, "no agent answers") ||
              absl::StrContains(flushed, "did not answer"))
      << flushed;
  ExpectKnownSequence(ReadJob(db_, "two-nodes"));
  const auto job =
      JobEntry(Runfile("cli/meridian"), address_, env_, "two-nodes");
  EXPECT_EQ(job.fields().at("ranks_seen").number_value(), 4);
  EXPECT_EQ(job.fields().at("world_size").number_value(), 4);
  EXPECT_FALSE(job.fields().at("incomplete").bool_value());
}

// A rank that runs untraced: 3 ranks seen of the 4 Open MPI started. The
// launcher's world size is hidden: MPI_Comm_size says it at MPI_Init.
TEST_F(MpiCaptureTest, AJobWithAnUntracedRankIsIncomplete) {
  StartCollector();
  const std::string rank_script =
      "unset OMPI_COMM_WORLD_SIZE; "
      "if [ \"$OMPI_COMM_WORLD_RANK\" = 3 ]; then unset LD_PRELOAD; fi; "
      "exec " +
      Runfile("tests/mpi_known");
  Child run =
      Spawn(MeridianRun("lost", Mpirun({"sh", "-c", rank_script})), env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  const auto job = JobEntry(Runfile("cli/meridian"), address_, env_, "lost");
  EXPECT_EQ(job.fields().at("ranks_seen").number_value(), 3);
  EXPECT_EQ(job.fields().at("world_size").number_value(), 4);
  EXPECT_TRUE(job.fields().at("incomplete").bool_value());
}

// A process that records faster than its agent reads loses records to its
// full ring: how many is said where users look. One thread records 200,000
// spans into a ring of 64 records (the agent, woken at half full, cannot
// keep up): every span recorded is either stored or counted as dropped,
// and `meridian jobs` and the Chrome export say how many were dropped,
// the same count the agent gave.
TEST_F(MpiCaptureTest, SpansLostToFullRingsAreCountedInJobsAndExports) {
  StartCollector();
  Child agent = StartAgent();
  env_["MERIDIAN_RING_RECORDS"] = "64";
  Child run = Spawn(MeridianRun("lossy", {Runfile("tests/thread_churn_job"),
                                          "1", "1", "200000"}),
                    env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "thread_churn_job: 200000 spans")) << out;
  unsigned long long received = 0, sent = 0, spooled = 0, dropped = 0;
  const size_t at =
      out.find("(this job on the agent, all its processes there: ");
  ASSERT_NE(at, std::string::npos) << out;
  ASSERT_EQ(sscanf(out.c_str() + at,
                   "(this job on the agent, all its processes there: %llu "
                   "spans received, %llu sent, "
                   "%llu spooled, "
                   "%llu dropped",
                   &received, &sent, &spooled, &dropped),
            4)
      << out;
  EXPECT_GT(dropped, 0u) << out;
  EXPECT_EQ(received, sent);
  // The 200,000 and the 4 resource use counters at exit: each stored or
  // dropped.
  EXPECT_EQ(received + dropped, 200004u) << out;
  const auto job = JobEntry(Runfile("cli/meridian"), address_, env_, "lossy");
  EXPECT_EQ(job.fields().at("spans").number_value(), received);
  EXPECT_EQ(job.fields().at("spans_dropped").number_value(), dropped);
  Child text =
      Spawn({Runfile("cli/meridian"), "--collector", address_, "jobs"}, env_);
  const std::string listed = text.ReadAll();
  ASSERT_EQ(text.Wait(), 0) << listed;
  EXPECT_TRUE(absl::StrContains(
      listed, absl::StrCat("  ", dropped,
                           " spans dropped (full rings: missing from the "
                           "timeline)\n")))
      << listed;
  Child stats = Spawn({Runfile("cli/meridian"), "--collector", address_,
                       "stats", "--job", "lossy", "--json"},
                      env_, /*merge_stderr=*/false);
  const std::string stats_json = stats.ReadAll();
  ASSERT_EQ(stats.Wait(), 0) << stats_json;
  EXPECT_TRUE(absl::StrContains(
      stats_json, absl::StrCat("\"spans_dropped\":", dropped, "}")))
      << stats_json;
  const std::string trace = dir_ + "/lossy.json";
  Child exported = Spawn({Runfile("cli/meridian"), "--collector", address_,
                          "export", "--job", "lossy", "-o", trace},
                         env_);
  const std::string said = exported.ReadAll();
  ASSERT_EQ(exported.Wait(), 0) << said;
  std::ifstream in(trace);
  const std::string json((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  EXPECT_TRUE(
      absl::StrContains(json, absl::StrCat("\"spans_dropped\":", dropped, ",")))
      << json.substr(json.size() > 300 ? json.size() - 300 : 0);
  EXPECT_TRUE(absl::StrContains(
      json,
      absl::StrCat("\"labels\":\"", dropped, " spans dropped (full rings)\"")));
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

// --job names a job once: a second run with that name is refused (125,
// before the command runs) unless --append; meridian run's own exit codes
// are not the command's.
TEST_F(MpiCaptureTest, AReusedJobNameIsRefusedUnlessAppended) {
  StartCollector();
  Child first =
      Spawn(MeridianRun("reuse", Mpirun({Runfile("tests/mpi_known")})), env_);
  const std::string first_out = first.ReadAll();
  ASSERT_EQ(first.Wait(), 0) << first_out;
  const std::string marker = dir_ + "/ran";
  Child again = Spawn(MeridianRun("reuse", {"touch", marker}), env_);
  EXPECT_EQ(again.ReadAll(),
            "meridian run: the collector at " + address_ +
                " already holds job reuse: its spans would merge into the old "
                "job's. Pass --append to add to it, or choose another --job "
                "(meridian jobs lists them)\n");
  EXPECT_EQ(again.Wait(), 125);
  EXPECT_NE(access(marker.c_str(), F_OK), 0);  // the command never ran
  std::vector<std::string> append = MeridianRun("reuse", {"touch", marker});
  append.insert(append.begin() + 4, "--append");  // after "run"
  Child appended = Spawn(append, env_);
  const std::string appended_out = appended.ReadAll();
  EXPECT_EQ(appended.Wait(), 0) << appended_out;
  EXPECT_EQ(access(marker.c_str(), F_OK), 0);
  Child missing =
      Spawn(MeridianRun("codes", {dir_ + "/no-such-program"}), env_);
  const std::string missing_out = missing.ReadAll();
  EXPECT_EQ(missing.Wait(), 127) << missing_out;
  Child not_executable = Spawn(MeridianRun("codes2", {db_}), env_);
  const std::string not_executable_out = not_executable.ReadAll();
  EXPECT_EQ(not_executable.Wait(), 126) << not_executable_out;
  Child status = Spawn(MeridianRun("codes3", {"sh", "-c", "exit 7"}), env_);
  status.ReadAll();
  EXPECT_EQ(status.Wait(), 7);
}

}  // namespace
}  // namespace mpi_capture
}  // namespace meridian
