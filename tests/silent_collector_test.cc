// A collector that takes connections and never answers (testing/
// silent_collector.h: a TCP listener whose HTTP/2 handshake never
// completes, and a gRPC server that holds every call open), against the
// real programs:
//   - meridian-agent, holding spans it cannot deliver, exits 0 within its
//     documented stop grace (2 s, docs/agent.md) of SIGTERM, the spans
//     spooled; with a short --ack-timeout-ms it gives the round up and
//     spools it while running;
//   - meridian jobs, export and import exit 1 within --request-timeout,
//     saying so (docs/cli.md, "Timeouts").
//
// Synchronisation is by blocking reads (ready lines, log lines, the
// calls the silent collector saw, end of file on a pipe when a program
// exits), each bounded, never by sleeping.
#include "testing/silent_collector.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "meridian/v1/query.grpc.pb.h"
#include "testing/runfile.h"

extern char** environ;

namespace meridian {
namespace {

using Kind = SilentCollector::Kind;

// The agent's stop grace (NodeAgent::kStopGraceMs, docs/agent.md), and
// what is allowed beyond a deadline for a loaded machine to act on it.
constexpr absl::Duration kGrace = absl::Seconds(2);
constexpr absl::Duration kMargin = absl::Seconds(5);

// A program run with its stdout and stderr on pipes of their own.
struct Child {
  pid_t pid = -1;
  int out = -1;
  int err = -1;
};

// The environment and arguments are made before fork: this process runs
// gRPC's threads, so the child does nothing but dup2 and exec.
Child Spawn(const std::vector<std::string>& argv,
            const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    if (env.count(entry.substr(0, entry.find('='))) == 0) {
      environment.push_back(entry);
    }
  }
  for (const auto& [name, value] : env) {
    environment.push_back(name + "=" + value);
  }
  std::vector<char*> args, envp;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const std::string& e : environment) {
    envp.push_back(const_cast<char*>(e.c_str()));
  }
  envp.push_back(nullptr);
  int out[2], err[2];
  EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(err, O_CLOEXEC), 0);
  Child child;
  child.pid = fork();
  if (child.pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  child.out = out[0];
  child.err = err[0];
  return child;
}

// Reads `fds` into `texts` until end of file on all (true) or `deadline`
// (false).
bool ReadToEnd(std::vector<int> fds, absl::Time deadline,
               std::vector<std::string*> texts) {
  std::vector<pollfd> open;
  for (int fd : fds) open.push_back({fd, POLLIN, 0});
  while (!open.empty()) {
    const int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left <= 0) return false;
    if (poll(open.data(), open.size(), static_cast<int>(left)) <= 0) continue;
    for (size_t i = 0; i < open.size();) {
      char buffer[4096];
      const ssize_t n =
          open[i].revents != 0 ? read(open[i].fd, buffer, sizeof(buffer)) : 1;
      if (n <= 0) {
        texts.erase(texts.begin() + i);
        open.erase(open.begin() + i);
        continue;
      }
      if (open[i].revents != 0) texts[i]->append(buffer, n);
      ++i;
    }
  }
  return true;
}

// Reads `fd` until a line containing `wanted` (returned) or end of file or
// `deadline` ("").
std::string ReadLineWith(int fd, const std::string& wanted, absl::Time deadline,
                         std::string* text) {
  for (;;) {
    size_t begin = 0;
    for (size_t end; (end = text->find('\n', begin)) != std::string::npos;
         begin = end + 1) {
      const std::string line = text->substr(begin, end - begin);
      if (absl::StrContains(line, wanted)) return line;
    }
    const int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (left <= 0) return "";
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buffer[4096];
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n <= 0) return "";
    text->append(buffer, static_cast<size_t>(n));
  }
}

// The exit code (or 128 + signal) of a child whose pipes are at their end.
int Reap(Child& child) {
  int status = 0;
  waitpid(child.pid, &status, 0);
  close(child.out);
  close(child.err);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A program's whole run: its output, error output and exit code, and how
// long it took; fails the test if it runs past `limit`.
struct Outcome {
  std::string out, err;
  int code = -1;
  absl::Duration took;
};
Outcome RunToEnd(const std::vector<std::string>& argv, absl::Duration limit,
                 const std::map<std::string, std::string>& env = {}) {
  Outcome run;
  const absl::Time began = absl::Now();
  Child child = Spawn(argv, env);
  const bool ended =
      ReadToEnd({child.err, child.out}, began + limit, {&run.err, &run.out});
  run.took = absl::Now() - began;
  EXPECT_TRUE(ended) << argv[0] << " still running after " << limit;
  if (!ended) kill(child.pid, SIGKILL);
  run.code = Reap(child);
  return run;
}

class SilentCollectorTest : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/meridian-silent-XXXXXX";
    dir_ = mkdtemp(dir);
    socket_ = dir_ + "/agent.sock";
    auto silent = SilentCollector::Start(GetParam());
    ASSERT_TRUE(silent.ok()) << silent.status();
    silent_ = std::move(*silent);
  }
  void TearDown() override {
    if (agent_.pid > 0) {
      kill(agent_.pid, SIGKILL);
      Reap(agent_);
    }
    (void)!system(("rm -rf " + dir_).c_str());
  }

  // Starts meridian-agent for the silent collector; returns once it
  // serves (its ready line).
  void StartAgent(const std::vector<std::string>& flags) {
    std::vector<std::string> argv = {Runfile("agent/meridian-agent"),
                                     "--collector",
                                     silent_->address(),
                                     "--socket",
                                     socket_,
                                     "--spool",
                                     dir_ + "/spool"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    agent_ = Spawn(argv);
    std::string out;
    ASSERT_NE(ReadLineWith(agent_.out, "meridian-agent ",
                           absl::Now() + absl::Seconds(30), &out),
              "")
        << out;
  }

  // Runs tests/no_mpi_job traced by the agent, and waits until the agent
  // holds its spans: a status request drains every ring of the processes
  // that connected before it (node_agent.h).
  void TraceAJob() {
    const Outcome job =
        RunToEnd({Runfile("tests/no_mpi_job")}, absl::Seconds(60),
                 {{"MERIDIAN_AGENT_SOCKET", socket_},
                  {"MERIDIAN_JOB", "silent"},
                  {"LD_PRELOAD", Runfile("capture/probe/"
                                         "libmeridian_probe.so")}});
    ASSERT_EQ(job.code, 0) << job.out << job.err;
    const Outcome status = RunToEnd(
        {Runfile("agent/meridian-agent"), "--status", "--socket", socket_},
        absl::Seconds(30));
    ASSERT_EQ(status.code, 0) << status.err;
    // The step, the phase "load" and the four rusage counters at exit.
    EXPECT_TRUE(absl::StrContains(status.out, "\nreceived 6\nsent 0\n"))
        << status.out;
  }

  // SIGTERM, then the agent's whole error output until it exits (which
  // closes the pipe), within `limit`; the exit code and how long it took.
  Outcome Terminate(absl::Duration limit) {
    Outcome run;
    const absl::Time began = absl::Now();
    kill(agent_.pid, SIGTERM);
    const bool ended = ReadToEnd({agent_.err}, began + limit, {&run.err});
    run.took = absl::Now() - began;
    EXPECT_TRUE(ended) << "the agent still runs " << limit
                       << " after SIGTERM:\n"
                       << run.err;
    if (!ended) kill(agent_.pid, SIGKILL);
    run.code = Reap(agent_);
    agent_ = Child();
    return run;
  }

  std::vector<std::string> Meridian(std::vector<std::string> args) {
    args.insert(args.begin(), {Runfile("cli/meridian"), "--collector",
                               silent_->address(), "--request-timeout", "1"});
    return args;
  }

  std::string dir_, socket_;
  std::unique_ptr<SilentCollector> silent_;
  Child agent_;
};

TEST_P(SilentCollectorTest, AgentExitsWithinItsGraceItsSpansSpooled) {
  // No ack timeout within the test: only the stop ends the round.
  StartAgent({"--ack-timeout-ms", "3600000"});
  TraceAJob();
  if (GetParam() == Kind::kGrpc) {
    // The round is on the wire, waiting for acks that never come.
    ASSERT_TRUE(
        silent_->WaitFor("/meridian.v1.Ingest/Stream", 1, absl::Seconds(30)));
  }
  const Outcome stop = Terminate(kGrace + kMargin);
  EXPECT_EQ(stop.code, 0) << stop.err;
  // It waited the grace for acknowledgements, and not much more.
  EXPECT_GE(stop.took, kGrace);
  EXPECT_LT(stop.took, kGrace + kMargin);
  EXPECT_TRUE(absl::StrContains(
      stop.err,
      "agent stopped: 1 processes, 6 spans received, 0 sent, 6 spooled, 0 "
      "dropped, 0 rejected, 0 invalid"))
      << stop.err;
  EXPECT_FALSE(absl::StrContains(stop.err, "cannot deliver")) << stop.err;
}

TEST_P(SilentCollectorTest, AgentGivesUpARoundNoAckComesForAndSpoolsIt) {
  StartAgent({"--ack-timeout-ms", "300"});
  TraceAJob();
  std::string err;
  const std::string line =
      ReadLineWith(agent_.err, "cannot deliver to the collector",
                   absl::Now() + absl::Seconds(30), &err);
  EXPECT_TRUE(absl::StrContains(
      line,
      "cannot deliver to the collector (the collector acknowledged nothing "
      "for 300 ms; 1 of 1 batches unacknowledged); spooling"))
      << err;
  // Spooled while running: the next status reply is made after the spill.
  const Outcome status = RunToEnd(
      {Runfile("agent/meridian-agent"), "--status", "--socket", socket_},
      absl::Seconds(30));
  EXPECT_TRUE(absl::StrContains(status.out, "\nsent 0\nspooled 6\n"))
      << status.out;
  // The collector counts as unreachable: no grace to wait.
  const Outcome stop = Terminate(kMargin);
  EXPECT_EQ(stop.code, 0) << stop.err;
  EXPECT_LT(stop.took, kGrace);
  EXPECT_TRUE(absl::StrContains(stop.err,
                                "agent stopped: 1 processes, 6 spans received, "
                                "0 sent, 6 spooled"))
      << stop.err;
}

TEST_P(SilentCollectorTest, JobsGivesUpAfterTheRequestTimeout) {
  const Outcome jobs = RunToEnd(Meridian({"jobs"}), absl::Seconds(1) + kMargin);
  EXPECT_EQ(jobs.code, 1);
  EXPECT_EQ(jobs.err, absl::StrCat("meridian: jobs: the collector at ",
                                   silent_->address(),
                                   " did not answer within 1 s "
                                   "(--request-timeout)\n"));
  EXPECT_EQ(jobs.out, "");
  EXPECT_GE(jobs.took, absl::Seconds(1));
}

TEST_P(SilentCollectorTest, ExportGivesUpAfterTheRequestTimeout) {
  const std::string trace = dir_ + "/t.json";
  const Outcome exp = RunToEnd(Meridian({"export", "--job", "j", "-o", trace}),
                               absl::Seconds(1) + kMargin);
  EXPECT_EQ(exp.code, 1);
  // The job's description (ListJobs) was never answered.
  EXPECT_EQ(exp.err, absl::StrCat("meridian: export: the collector at ",
                                  silent_->address(),
                                  " did not answer within 1 s "
                                  "(--request-timeout)\n"));
  struct stat st;
  EXPECT_NE(stat(trace.c_str(), &st), 0);
  EXPECT_NE(stat((trace + ".partial").c_str(), &st), 0);
}

TEST_P(SilentCollectorTest, ImportGivesUpAfterTheRequestTimeout) {
  const std::string file = Runfile("tests/testdata/import/kineto_rank5.json");
  const Outcome import = RunToEnd(Meridian({"import", "--job", "j", file}),
                                  absl::Seconds(1) + kMargin);
  EXPECT_EQ(import.code, 1);
  EXPECT_EQ(import.err,
            absl::StrCat("meridian import: ", file,
                         ": the collector acknowledged nothing for 1000 ms; 1 "
                         "of 1 batches unacknowledged (--request-timeout); "
                         "importing it again completes it (nothing is stored "
                         "twice)\nmeridian import: 1 of 1 files not imported (",
                         silent_->address(), ")\n"));
}

INSTANTIATE_TEST_SUITE_P(BothKinds, SilentCollectorTest,
                         ::testing::Values(Kind::kTcp, Kind::kGrpc),
                         [](const ::testing::TestParamInfo<Kind>& info) {
                           return std::string(KindName(info.param));
                         });

// Answers ListJobs with job "j", and holds ExportTrace open without a
// chunk: an export whose stream goes silent.
class SilentExport
    : public v1::Query::WithCallbackMethod_ExportTrace<v1::Query::Service> {
 public:
  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest*,
                        v1::ListJobsReply* reply) override {
    v1::JobSummary* job = reply->add_jobs();
    job->set_job("j");
    job->set_ranks(1);
    job->add_rank_ids(0);
    return grpc::Status::OK;
  }
  grpc::ServerWriteReactor<v1::TraceChunk>* ExportTrace(
      grpc::CallbackServerContext*, const v1::ExportRequest*) override {
    class Holding : public grpc::ServerWriteReactor<v1::TraceChunk> {
     public:
      void OnCancel() override { Finish(grpc::Status::CANCELLED); }
      void OnDone() override { delete this; }
    };
    return new Holding;
  }
};

TEST(SilentExportTest, AnExportWhoseChunksStopComingGivesUp) {
  SilentExport service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  const std::string address = absl::StrCat("127.0.0.1:", port);
  char dir[] = "/tmp/meridian-silent-XXXXXX";
  const std::string trace = std::string(mkdtemp(dir)) + "/t.json";
  const Outcome exp =
      RunToEnd({Runfile("cli/meridian"), "--collector", address, "export",
                "--job", "j", "-o", trace, "--request-timeout", "1"},
               absl::Seconds(1) + kMargin);
  EXPECT_EQ(exp.code, 1);
  EXPECT_EQ(exp.err,
            absl::StrCat("meridian: export: the collector at ", address,
                         " sent nothing for 1 s "
                         "(--request-timeout)\n"));
  EXPECT_EQ(exp.out, "");
  EXPECT_GE(exp.took, absl::Seconds(1));
  struct stat st;
  EXPECT_NE(stat(trace.c_str(), &st), 0);
  EXPECT_NE(stat((trace + ".partial").c_str(), &st), 0);
  server->Shutdown(gpr_now(GPR_CLOCK_MONOTONIC));
  (void)!system(("rm -rf " + std::string(dir)).c_str());
}

}  // namespace
}  // namespace meridian
