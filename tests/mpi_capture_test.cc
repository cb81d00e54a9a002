// MPI capture end to end, with real parts: a real collector, a real
// meridian-agent, `meridian run` and Open MPI's mpirun with 4 ranks running
// tests/mpi_known.cc, and the Python binding. What the collector stored is
// read back from its SQLite file and compared exactly.
//
// Synchronization is by blocking reads (the collector's and agent's ready
// lines, FIFOs the MPI program opens, the agent's flush answer), never by
// sleeping.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "store/store.h"
#include "testing/runfile.h"
#include "tests/collector_process.h"

namespace meridian {
namespace {

// A child process with its stdout (and stderr) on a pipe.
struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;

  std::string ReadLine() {
    char line[1024];
    return fgets(line, sizeof(line), out) ? line : "";
  }
  std::string ReadAll() {
    std::string all;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof(buffer), out)) > 0)
      all.append(buffer, n);
    return all;
  }
  // The exit code, or 128 + signal.
  int Wait() {
    int status = 0;
    waitpid(pid, &status, 0);
    if (out) fclose(out);
    out = nullptr;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

Child Spawn(const std::vector<std::string>& argv,
            const std::map<std::string, std::string>& env,
            bool merge_stderr = true) {
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  Child child;
  child.pid = fork();
  if (child.pid == 0) {
    dup2(pipe_fds[1], 1);
    if (merge_stderr) dup2(pipe_fds[1], 2);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    for (const auto& [name, value] : env)
      setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  child.out = fdopen(pipe_fds[0], "r");
  return child;
}

// One stored span, with its process and track resolved.
struct Row {
  int rank;
  std::string name;
  v1::Category category;
  v1::SpanKind kind;
  std::string track;
  v1::TrackKind track_kind;
  StoredSpan span;
};

// What every MPI rank records besides the calls a test is about: the
// resource use counters at MPI_Finalize and at exit, and MPI_Comm_rank and
// MPI_Comm_size (which the known-sequence programs call to set themselves
// up, from C and from Fortran). EveryNewCallIsRecordedExactly and
// FortranNewCallsAreRecordedLikeC check them; ReadJob leaves them out
// unless asked.
bool IsAccounting(const std::string& name) {
  return absl::StartsWith(name, "rusage.") || name == "MPI_Comm_rank" ||
         name == "MPI_Comm_size";
}

std::vector<Row> ReadJob(const std::string& db, const std::string& job,
                         bool with_accounting = false) {
  auto store = Store::Open(db, StoreOptions{});
  EXPECT_TRUE(store.ok()) << store.status();
  if (!store.ok()) return {};
  auto catalog = (*store)->LoadCatalog(job);
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  if (!catalog.ok()) return {};
  std::map<int64_t, int> rank_of_process;
  for (const ProcessInfo& p : catalog->processes)
    rank_of_process[p.id] = p.rank;
  std::map<int64_t, const TrackInfo*> tracks;
  for (const TrackInfo& t : catalog->tracks) tracks[t.id] = &t;
  std::map<int64_t, const OpInfo*> ops;
  for (const OpInfo& o : catalog->ops) ops[o.id] = &o;
  std::vector<Row> rows;
  absl::Status scan =
      (*store)->Scan(catalog->job, ScanRange{}, [&](const StoredSpan& span) {
        const TrackInfo* track = tracks[span.track_id];
        const OpInfo* op = ops[span.op_id];
        if (!with_accounting && IsAccounting(op->name)) return true;
        rows.push_back({rank_of_process[track->process_id], op->name,
                        op->category, span.kind, track->name, track->kind,
                        span});
        return true;
      });
  EXPECT_TRUE(scan.ok()) << scan;
  return rows;
}

// The full path of `program` on $PATH, or "" where there is none.
std::string OnPath(const std::string& program) {
  const char* env_path = getenv("PATH");
  const std::string paths = env_path != nullptr ? env_path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= paths.size()) {
    size_t end = paths.find(':', start);
    if (end == std::string::npos) end = paths.size();
    const std::string candidate =
        paths.substr(start, end - start) + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

std::vector<Row> Select(const std::vector<Row>& rows, int rank,
                        const std::string& name) {
  std::vector<Row> out;
  for (const Row& r : rows) {
    if (r.rank == rank && r.name == name) out.push_back(r);
  }
  return out;
}

class MpiCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir_template[] = "/tmp/meridian-test-XXXXXX";
    dir_ = mkdtemp(dir_template);
    socket_ = dir_ + "/agent.sock";
    db_ = dir_ + "/store.db";
    env_ = {
        {"MERIDIAN_AGENT_SOCKET", socket_},
        {"MERIDIAN_PROBE_LIB", Runfile("capture/probe/libmeridian_probe.so")},
        {"MERIDIAN_AGENT_BIN", Runfile("agent/meridian-agent")},
        {"TMPDIR", "/tmp"},  // Open MPI's session sockets need a short path
        {"PYTHONPATH", Runfile("capture/probe/python")},
    };
    // `mpirun` is Open MPI's here whatever Debian's alternatives say once
    // MPICH is installed beside it: a link of that name (the name is what
    // `meridian run` recognizes) first on PATH.
    const std::string open_mpi = OnPath("mpirun.openmpi");
    const char* path = getenv("PATH");
    if (!open_mpi.empty() && mkdir((dir_ + "/bin").c_str(), 0700) == 0 &&
        symlink(open_mpi.c_str(), (dir_ + "/bin/mpirun").c_str()) == 0) {
      env_["PATH"] = dir_ + "/bin:" + (path != nullptr ? path : "/usr/bin");
    }
  }
  void TearDown() override {
    std::string command = "rm -rf " + dir_;
    (void)!system(command.c_str());
  }

  void StartCollector(const std::string& listen = "127.0.0.1:0") {
    auto collector = CollectorProcess::Start(
        Runfile("collector/meridian-collector"), db_, listen);
    ASSERT_TRUE(collector.ok()) << collector.status();
    collector_.emplace(std::move(*collector));
    address_ = collector_->address();
  }

  // Starts meridian-agent on socket_; returns once it serves.
  Child StartAgent(const std::vector<std::string>& flags = {}) {
    std::vector<std::string> argv = {Runfile("agent/meridian-agent"),
                                     "--collector",
                                     address_,
                                     "--socket",
                                     socket_,
                                     "--spool",
                                     dir_ + "/spool"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    Child agent = Spawn(argv, env_, /*merge_stderr=*/false);
    EXPECT_TRUE(absl::StartsWith(agent.ReadLine(), "meridian-agent "));
    return agent;
  }

  std::vector<std::string> Mpirun(std::vector<std::string> program) {
    // A job that hangs is killed after 60 s with every rank's stack and
    // state in the failure (gdb): the f08 persistent-collectives job hung
    // once in CI and never since, so the next hang says where.
    std::vector<std::string> argv = {"mpirun",
                                     "--allow-run-as-root",
                                     "--oversubscribe",
                                     "--timeout",
                                     "60",
                                     "--get-stack-traces",
                                     "--report-state-on-timeout",
                                     "-np",
                                     "4"};
    argv.insert(argv.end(), program.begin(), program.end());
    return argv;
  }

  std::vector<std::string> MeridianRun(const std::string& job,
                                       std::vector<std::string> command) {
    std::vector<std::string> argv = {Runfile("cli/meridian"),
                                     "--collector",
                                     address_,
                                     "run",
                                     "--job",
                                     job,
                                     "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    return argv;
  }

  // Runs `command` under `meridian run --job JOB` with `env` and waits:
  // true if it exited 0, else a failure naming what it printed.
  bool Traced(const std::string& job, std::vector<std::string> command,
              const std::map<std::string, std::string>& env) {
    Child run = Spawn(MeridianRun(job, std::move(command)), env);
    const std::string out = run.ReadAll();
    const int status = run.Wait();
    EXPECT_EQ(status, 0) << job << ": " << out;
    return status == 0;
  }
  bool Traced(const std::string& job, std::vector<std::string> command) {
    return Traced(job, std::move(command), env_);
  }

  // Runs a compiler (or any tool) and waits: true if it exited 0.
  bool Built(const std::vector<std::string>& argv) {
    Child compile = Spawn(argv, env_);
    const std::string said = compile.ReadAll();
    const int status = compile.Wait();
    EXPECT_EQ(status, 0) << said;
    return status == 0;
  }

  // A check of a traced job: (store, collector address, environment, job).
  using JobCheck = void (*)(const std::string&, const std::string&,
                            const std::map<std::string, std::string>&,
                            const std::string&);
  // `mpi_edges MODE` on 4 ranks, traced as job MODE, then `check`.
  void CheckEdges(const std::string& mode, JobCheck check) {
    StartCollector();
    Child agent = StartAgent();
    ASSERT_TRUE(Traced(mode, Mpirun({Runfile("tests/mpi_edges"), mode})));
    check(db_, address_, env_, mode);
    StopAgent(agent);
  }

  void StopAgent(Child& agent) {
    kill(agent.pid, SIGTERM);
    EXPECT_EQ(agent.Wait(), 0);
  }

  std::string AgentStatus() {
    Child status = Spawn(
        {Runfile("agent/meridian-agent"), "--status", "--socket", socket_},
        env_);
    const std::string out = status.ReadAll();
    EXPECT_EQ(status.Wait(), 0) << out;
    return out;
  }

  int Flush() {
    Child flush = Spawn({Runfile("agent/meridian-agent"), "--flush",
                         "--timeout", "60", "--socket", socket_},
                        env_);
    const std::string out = flush.ReadAll();
    const int code = flush.Wait();
    EXPECT_TRUE(absl::StrContains(out, "state delivered")) << out;
    return code;
  }

  std::string dir_, socket_, db_, address_;
  std::map<std::string, std::string> env_;
  std::optional<CollectorProcess> collector_;
};

// What every rank of mpi_known's known sequence recorded.
void ExpectKnownSequence(const std::vector<Row>& rows) {
  // Per rank: Init, Send, Recv, Isend, Irecv, Waitall, 6 Allreduce,
  // Comm_split, Bcast, Comm_dup, Barrier, Alltoallv, Gatherv, Iallreduce,
  // Wait, 2 Allgather, Finalize (23 MPI) + step, forward, checkpoint, loss
  // (4 user).
  ASSERT_EQ(rows.size(), 4u * 27);
  std::map<uint64_t, std::set<int>> members_of_comm;
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(absl::StrCat("rank ", rank));
    for (const char* name :
         {"MPI_Init", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv",
          "MPI_Waitall", "MPI_Comm_split", "MPI_Bcast", "MPI_Comm_dup",
          "MPI_Barrier", "MPI_Alltoallv", "MPI_Gatherv", "MPI_Iallreduce",
          "MPI_Wait", "MPI_Finalize", "step", "forward", "checkpoint",
          "loss"}) {
      EXPECT_EQ(Select(rows, rank, name).size(), 1u) << name;
    }
    const Row send = Select(rows, rank, "MPI_Send")[0];
    EXPECT_EQ(send.span.bytes, 40);
    EXPECT_EQ(send.span.peer, (rank + 1) % 4);
    EXPECT_EQ(send.span.tag, 7);
    EXPECT_EQ(send.span.comm, 1u);
    EXPECT_EQ(send.span.comm_size, 4u);
    EXPECT_FALSE(send.span.seq.has_value());
    const Row recv = Select(rows, rank, "MPI_Recv")[0];  // MPI_ANY_SOURCE
    EXPECT_EQ(recv.span.bytes, 40);
    EXPECT_EQ(recv.span.peer, (rank + 3) % 4);
    EXPECT_EQ(recv.span.tag, 7);
    for (const char* name : {"MPI_Isend", "MPI_Irecv"}) {
      const Row r = Select(rows, rank, name)[0];
      EXPECT_EQ(r.span.bytes, 24) << name;
      EXPECT_EQ(r.span.peer, (rank + 2) % 4) << name;
      EXPECT_EQ(r.span.tag, 9) << name;
      // From issue to completion in the Waitall.
      const Row waitall = Select(rows, rank, "MPI_Waitall")[0];
      EXPECT_LE(r.span.start_ns + r.span.dur_ns,
                waitall.span.start_ns + waitall.span.dur_ns)
          << name;
      EXPECT_GE(r.span.start_ns + r.span.dur_ns, waitall.span.start_ns) << name;
    }
    // World collectives in order: 5 Allreduce, Alltoallv, Gatherv,
    // Iallreduce.
    std::vector<Row> world_allreduce;
    for (const Row& r : Select(rows, rank, "MPI_Allreduce")) {
      if (r.span.comm == 1) world_allreduce.push_back(r);
    }
    ASSERT_EQ(world_allreduce.size(), 5u);
    for (uint64_t i = 0; i < 5; ++i) {
      EXPECT_EQ(world_allreduce[i].span.seq, i);
      EXPECT_EQ(world_allreduce[i].span.bytes, 8);
      EXPECT_EQ(world_allreduce[i].span.step, 0);
    }
    const Row alltoallv = Select(rows, rank, "MPI_Alltoallv")[0];
    EXPECT_EQ(alltoallv.span.seq, 5u);
    EXPECT_EQ(alltoallv.span.bytes, 40);  // (1 + 2 + 3 + 4) ints
    const Row gatherv = Select(rows, rank, "MPI_Gatherv")[0];
    EXPECT_EQ(gatherv.span.seq, 6u);
    EXPECT_EQ(gatherv.span.bytes, rank == 0 ? 40 : 4 * (rank + 1));
    EXPECT_EQ(gatherv.span.peer, 0);
    const Row iallreduce = Select(rows, rank, "MPI_Iallreduce")[0];
    EXPECT_EQ(iallreduce.span.seq, 7u);
    EXPECT_EQ(iallreduce.span.bytes, 8);
    // One int block of 2, then one of 3 (a new derived type, often at the
    // handle the first was freed from).
    const std::vector<Row> allgather = Select(rows, rank, "MPI_Allgather");
    ASSERT_EQ(allgather.size(), 2u);
    EXPECT_EQ(allgather[0].span.seq, 8u);
    EXPECT_EQ(allgather[0].span.bytes, 8);
    EXPECT_EQ(allgather[1].span.seq, 9u);
    EXPECT_EQ(allgather[1].span.bytes, 12);
    EXPECT_FALSE(Select(rows, rank, "MPI_Gatherv")[0].span.step.has_value());

    // The split: two communicators of 2, one Allreduce (seq 0) and one Bcast
    // (seq 1, root = the group's rank 0 = world rank 0 or 1).
    std::vector<Row> half;
    for (const Row& r : Select(rows, rank, "MPI_Allreduce")) {
      if (r.span.comm != 1) half.push_back(r);
    }
    ASSERT_EQ(half.size(), 1u);
    EXPECT_EQ(half[0].span.comm_size, 2u);
    EXPECT_EQ(half[0].span.seq, 0u);
    EXPECT_EQ(half[0].span.bytes, 4);
    const Row bcast = Select(rows, rank, "MPI_Bcast")[0];
    EXPECT_EQ(bcast.span.comm, half[0].span.comm);
    EXPECT_EQ(bcast.span.seq, 1u);
    EXPECT_EQ(bcast.span.peer, rank % 2);
    members_of_comm[half[0].span.comm].insert(rank);
    const Row barrier = Select(rows, rank, "MPI_Barrier")[0];
    EXPECT_EQ(barrier.span.comm_size, 4u);
    EXPECT_NE(barrier.span.comm, 1u);
    EXPECT_EQ(barrier.span.seq, 0u);
    members_of_comm[barrier.span.comm].insert(rank);

    const Row step = Select(rows, rank, "step")[0];
    EXPECT_EQ(step.category, v1::CATEGORY_USER);
    EXPECT_EQ(step.span.step, 0);
    const Row forward = Select(rows, rank, "forward")[0];
    EXPECT_GE(forward.span.start_ns, step.span.start_ns);
    EXPECT_EQ(Select(rows, rank, "checkpoint")[0].kind, v1::SPAN_KIND_INSTANT);
    const Row loss = Select(rows, rank, "loss")[0];
    EXPECT_EQ(loss.kind, v1::SPAN_KIND_COUNTER);
    EXPECT_EQ(loss.span.value, 0.25 * rank);
    EXPECT_EQ(step.track, "main");
  }
  // Ids equal across members: {0, 2}, {1, 3} and the dup of all four.
  std::set<std::set<int>> groups;
  for (const auto& [comm, members] : members_of_comm) groups.insert(members);
  EXPECT_EQ(groups, (std::set<std::set<int>>{{0, 2}, {1, 3}, {0, 1, 2, 3}}));
  EXPECT_EQ(members_of_comm.size(), 3u);
}

TEST_F(MpiCaptureTest, EveryCallOfEveryRankArrivesExactly) {
  StartCollector();
  Child agent = StartAgent();
  Child run =
      Spawn(MeridianRun("known", Mpirun({Runfile("tests/mpi_known")})), env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  EXPECT_TRUE(absl::StrContains(out,
                                "meridian run: job known: every span "
                                "acknowledged"))
      << out;
  ExpectKnownSequence(ReadJob(db_, "known"));
  // The collector kept up: the spans went from the rings to the wire, and
  // the agent never wrote its spool.
  const std::string status = AgentStatus();
  EXPECT_TRUE(absl::StrContains(status, "\nspooled 0\nspool writes 0\n"))
      << status;
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

// The events of a Chrome export, one per line as the export writes them
// (without their separating commas), sorted; the closing otherData line,
// which names the job, left out.
std::vector<std::string> ExportedEvents(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> events;
  std::string line;
  while (std::getline(in, line)) {
    if (!absl::StartsWith(line, "{\"ph\"")) continue;
    if (absl::EndsWith(line, ",")) line.pop_back();
    events.push_back(line);
  }
  std::sort(events.begin(), events.end());
  return events;
}

// docs/import-export.md: a job exported, imported into another job and
// exported again gives the same events, times to the ns, and the same
// statistics. mpi_known has phases, a counter in a step, instants, MPI
// collectives and messages (their arrows).
TEST_F(MpiCaptureTest, AnExportImportedBackIsTheSameJob) {
  StartCollector();
  Child agent = StartAgent();
  ASSERT_TRUE(Traced("known", Mpirun({Runfile("tests/mpi_known")})));
  auto cli = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {Runfile("cli/meridian"), "--collector",
                                     address_};
    argv.insert(argv.end(), args.begin(), args.end());
    Child child = Spawn(argv, env_, /*merge_stderr=*/false);
    const std::string out = child.ReadAll();
    EXPECT_EQ(child.Wait(), 0) << absl::StrJoin(args, " ") << ": " << out;
    return out;
  };
  const std::string first = dir_ + "/first.json";
  const std::string again = dir_ + "/again.json";
  cli({"export", "--job", "known", "-o", first});
  cli({"import", "--job", "known-again", first});
  cli({"export", "--job", "known-again", "-o", again});
  const std::vector<std::string> a = ExportedEvents(first);
  const std::vector<std::string> b = ExportedEvents(again);
  // 16 message arrow ends: the Send/Recv ring's 4 messages and the
  // Isend/Irecv pairs' 4, a start and an end each.
  auto count = [](const std::vector<std::string>& events,
                  absl::string_view what) {
    return std::count_if(events.begin(), events.end(), [&](const auto& e) {
      return absl::StrContains(e, what);
    });
  };
  EXPECT_EQ(count(a, "\"cat\":\"message\""), 16) << absl::StrJoin(a, "\n");
  // The counters: "loss" in step 0 and the 4 resource-use counters at
  // MPI_Finalize and at exit, per rank.
  EXPECT_EQ(count(a, "{\"ph\":\"C\""), 4 + 4 * 4 * 2);
  EXPECT_EQ(count(a, "\"name\":\"loss\""), 4);
  EXPECT_EQ(a, b);
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i] != b[i]) {
      ADD_FAILURE() << "first difference:\n" << a[i] << "\n" << b[i];
      break;
    }
  }
  std::string stats = cli({"stats", "--job", "known", "--json"});
  std::string stats_again = cli({"stats", "--job", "known-again", "--json"});
  absl::StrReplaceAll({{"\"job\":\"known-again\"", "\"job\":\"known\""}},
                      &stats_again);
  EXPECT_EQ(stats, stats_again);
  StopAgent(agent);
}

// A real straggler: rank 2 sleeps 40 ms in "forward" before the first
// MPI_Allreduce. The analyses must name it, whatever else the 2-core
// machine's scheduling adds.
TEST_F(MpiCaptureTest, AnalysesFindARealLateRank) {
  StartCollector();
  Child agent = StartAgent();
  Child run = Spawn(
      MeridianRun("late", Mpirun({Runfile("tests/mpi_known"), "--late-rank",
                                  "2", "--late-ms", "40"})),
      env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  ExpectKnownSequence(ReadJob(db_, "late"));
  auto query = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {Runfile("cli/meridian"), "--collector",
                                     address_};
    argv.insert(argv.end(), args.begin(), args.end());
    Child child = Spawn(argv, env_);
    const std::string json = child.ReadAll();
    EXPECT_EQ(child.Wait(), 0) << json;
    google::protobuf::Struct parsed;
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok())
        << json;
    return parsed;
  };
  constexpr double kMs = 1e6;
  const auto stragglers =
      query({"stragglers", "--job", "late", "--json"}).fields();
  const auto& ranks = stragglers.at("ranks").list_value().values();
  ASSERT_EQ(ranks.size(), 4);
  const auto& late = ranks[0].struct_value().fields();
  EXPECT_EQ(late.at("rank").number_value(), 2);
  // Three ranks waited about 40 ms each for it at the first Allreduce.
  EXPECT_GE(late.at("wait_ns").number_value(), 3 * 30 * kMs);
  const auto& worst =
      stragglers.at("collectives").list_value().values()[0].struct_value();
  EXPECT_EQ(worst.fields().at("last_rank").number_value(), 2);
  EXPECT_GE(worst.fields().at("skew_ns").number_value(), 30 * kMs);

  const auto path =
      query({"critical-path", "--job", "late", "--step", "0", "--json"})
          .fields();
  EXPECT_EQ(path.at("ranks")
                .list_value()
                .values()[0]
                .struct_value()
                .fields()
                .at("rank")
                .number_value(),
            2);
  double forward_on_rank_2 = 0;
  for (const auto& v : path.at("segments").list_value().values()) {
    const auto& s = v.struct_value().fields();
    if (s.at("rank").number_value() == 2 &&
        s.at("name").string_value() == "forward") {
      forward_on_rank_2 += s.at("dur_ns").number_value();
    }
  }
  EXPECT_GE(forward_on_rank_2, 40 * kMs);
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

// What every rank of tests/mpi_known_fortran.F90 recorded.
void ExpectFortranSequence(const std::vector<Row>& rows) {
  ASSERT_EQ(rows.size(), 4u * 11);
  std::map<uint64_t, std::set<int>> members_of_comm;
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(absl::StrCat("rank ", rank));
    for (const char* name :
         {"MPI_Init", "MPI_Isend", "MPI_Recv", "MPI_Wait", "MPI_Allreduce",
          "MPI_Bcast", "MPI_Comm_split", "MPI_Iallreduce", "MPI_Waitall",
          "MPI_Barrier", "MPI_Finalize"}) {
      EXPECT_EQ(Select(rows, rank, name).size(), 1u) << name;
    }
    const Row isend = Select(rows, rank, "MPI_Isend")[0];
    EXPECT_EQ(isend.span.bytes, 20);
    EXPECT_EQ(isend.span.peer, (rank + 1) % 4);
    EXPECT_EQ(isend.span.tag, 7);
    EXPECT_EQ(isend.span.comm, 1u);
    const Row wait = Select(rows, rank, "MPI_Wait")[0];
    EXPECT_LE(isend.span.start_ns + isend.span.dur_ns,
              wait.span.start_ns + wait.span.dur_ns);
    EXPECT_GE(isend.span.start_ns + isend.span.dur_ns, wait.span.start_ns);
    const Row recv = Select(rows, rank, "MPI_Recv")[0];
    EXPECT_EQ(recv.span.bytes, 20);
    EXPECT_EQ(recv.span.peer, (rank + 3) % 4);  // MPI_ANY_SOURCE resolved
    EXPECT_EQ(recv.span.tag, 7);
    const Row allreduce = Select(rows, rank, "MPI_Allreduce")[0];
    EXPECT_EQ(allreduce.span.bytes, 16);
    EXPECT_EQ(allreduce.span.seq, 0u);
    EXPECT_EQ(allreduce.span.comm_size, 4u);
    const Row bcast = Select(rows, rank, "MPI_Bcast")[0];
    EXPECT_EQ(bcast.span.bytes, 12);
    EXPECT_EQ(bcast.span.seq, 1u);
    EXPECT_EQ(bcast.span.peer, 1);
    const Row iallreduce = Select(rows, rank, "MPI_Iallreduce")[0];
    EXPECT_EQ(iallreduce.span.bytes, 4);
    EXPECT_EQ(iallreduce.span.seq, 0u);
    EXPECT_EQ(iallreduce.span.comm_size, 2u);
    const Row waitall = Select(rows, rank, "MPI_Waitall")[0];
    EXPECT_LE(iallreduce.span.start_ns + iallreduce.span.dur_ns,
              waitall.span.start_ns + waitall.span.dur_ns);
    const Row barrier = Select(rows, rank, "MPI_Barrier")[0];
    EXPECT_EQ(barrier.span.comm, iallreduce.span.comm);
    EXPECT_EQ(barrier.span.seq, 1u);
    members_of_comm[barrier.span.comm].insert(rank);
  }
  EXPECT_EQ(members_of_comm.size(), 2u);
  std::set<std::set<int>> groups;
  for (const auto& [comm, members] : members_of_comm) groups.insert(members);
  EXPECT_EQ(groups, (std::set<std::set<int>>{{0, 2}, {1, 3}}));
}

// Open MPI's Fortran bindings call PMPI_* directly: these records come from
// the probe's Fortran symbols (mpi_isend_ with mpif.h, mpi_isend_f08_ with
// mpi_f08). tests/mpi_known_fortran.F90 checks its own results, so a wrong
// handle or sentinel conversion fails the job.
TEST_F(MpiCaptureTest, FortranCallsAreRecordedLikeCCalls) {
  StartCollector();
  Child agent = StartAgent();
  for (const std::string binding : {"mpifh", "f08"}) {
    SCOPED_TRACE(binding);
    const std::string job = "fortran-" + binding;
    Child run =
        Spawn(MeridianRun(job, Mpirun({Runfile("tests/mpi_known_" + binding)})),
              env_);
    const std::string out = run.ReadAll();
    ASSERT_EQ(run.Wait(), 0) << out;
    ExpectFortranSequence(ReadJob(db_, job));
  }
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

// What every rank of tests/mpi_local_job recorded: Init, 3 Allreduce of
// one double on the world (seq 0 to 2), Finalize.
void ExpectLocalSequence(const std::vector<Row>& rows) {
  ASSERT_EQ(rows.size(), 4u * 5);
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(absl::StrCat("rank ", rank));
    EXPECT_EQ(Select(rows, rank, "MPI_Init").size(), 1u);
    EXPECT_EQ(Select(rows, rank, "MPI_Finalize").size(), 1u);
    const std::vector<Row> allreduce = Select(rows, rank, "MPI_Allreduce");
    ASSERT_EQ(allreduce.size(), 3u);
    for (uint64_t i = 0; i < 3; ++i) {
      EXPECT_EQ(allreduce[i].span.seq, i);
      EXPECT_EQ(allreduce[i].span.bytes, 8);
      EXPECT_EQ(allreduce[i].span.comm, 1u);
      EXPECT_EQ(allreduce[i].span.comm_size, 4u);
    }
  }
}

// Python loads extensions RTLD_LOCAL, so the libmpi of one (mpi4py,
// Horovod) is not in the global scope, where the probe's dispatcher looks
// for it: the dispatcher makes it global (mpi_dispatch.h, step 2) and the
// calls are recorded.
TEST_F(MpiCaptureTest, MpiOfALibraryLoadedLocallyIsRecorded) {
  StartCollector();
  Child agent = StartAgent();
  Child run = Spawn(
      MeridianRun("local", Mpirun({Runfile("tests/mpi_local_job"),
                                   Runfile("tests/libmpi_local_ext.so")})),
      env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  EXPECT_TRUE(absl::StrContains(out, "mpi_local_job: 96\n")) << out;
  EXPECT_FALSE(absl::StrContains(out, "are not recorded")) << out;
  ExpectLocalSequence(ReadJob(db_, "local"));
  // Untraced (the probe preloaded, no agent socket): the calls reach the
  // MPI library all the same.
  std::vector<std::string> untraced = {
      "env", "-u", "MERIDIAN_AGENT_SOCKET",
      "LD_PRELOAD=" + Runfile("capture/probe/libmeridian_probe.so")};
  for (const std::string& arg :
       Mpirun({Runfile("tests/mpi_local_job"),
               Runfile("tests/libmpi_local_ext.so")})) {
    untraced.push_back(arg);
  }
  Child plain = Spawn(untraced, env_);
  const std::string plain_out = plain.ReadAll();
  ASSERT_EQ(plain.Wait(), 0) << plain_out;
  EXPECT_EQ(plain_out,
            "mpi_local_job: 96\nmpi_local_job: 96\nmpi_local_job: 96\n"
            "mpi_local_job: 96\n");
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

// A family library that cannot be loaded (here: MERIDIAN_MPI_WRAPPERS names
// a file that is not there) leaves the program's MPI calls to its MPI
// library, untraced; each process says so once, and what the program
// records through the C API still arrives.
TEST_F(MpiCaptureTest, WithoutItsFamilyLibraryMpiRunsUntracedAndSaysWhy) {
  StartCollector();
  Child agent = StartAgent();
  env_["MERIDIAN_MPI_WRAPPERS"] = dir_ + "/no-such-library.so";
  Child run = Spawn(
      MeridianRun("no-wrappers", Mpirun({Runfile("tests/mpi_known")})), env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  const std::string said =
      "meridian: MPI calls of this process are not "
      "recorded: " +
      dir_ +
      "/no-such-library.so: cannot open shared "
      "object file: No such file or directory";
  size_t times = 0;
  for (size_t at = out.find(said); at != std::string::npos;
       at = out.find(said, at + 1)) {
    ++times;
  }
  EXPECT_EQ(times, 4u) << out;
  const std::vector<Row> rows = ReadJob(db_, "no-wrappers");
  ASSERT_EQ(rows.size(), 4u * 4);  // step, forward, checkpoint, loss
  for (const Row& r : rows) EXPECT_EQ(r.category, v1::CATEGORY_USER) << r.name;
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

// MPICH (Debian's mpich): the known sequences built with MPICH's compilers
// and run by its mpiexec (Hydra) arrive exactly as under Open MPI, recorded
// by libmeridian_mpi_mpich.so, which libmeridian_probe.so loaded for the
// program's libmpich. The Fortran one (mpif.h) goes through MPICH's own
// Fortran bindings, which call the C functions; tests/mpi_local_job loads
// its libmpich RTLD_LOCAL, as Python would. Skipped where MPICH is not
// installed.
// The span's integer arg `key`, if it has one.
std::optional<int64_t> IntArg(const StoredSpan& span, const std::string& key) {
  for (const StoredArg& arg : span.args) {
    if (arg.key == key && arg.type == StoredArg::Type::kInt) {
      return arg.int_value;
    }
  }
  return std::nullopt;
}

// A non-blocking call's time inside its issuing call: present, and within
// the span (issue to completion).
void ExpectCallTime(const Row& row) {
  const std::optional<int64_t> call_ns = IntArg(row.span, "call_ns");
  ASSERT_TRUE(call_ns.has_value()) << row.name;
  EXPECT_GE(*call_ns, 0) << row.name;
  EXPECT_LE(*call_ns, row.span.dur_ns) << row.name;
}

// The one span named `name` of `rank`.
Row One(const std::vector<Row>& rows, int rank, const std::string& name) {
  const std::vector<Row> found = Select(rows, rank, name);
  EXPECT_EQ(found.size(), 1u) << name;
  return found.empty() ? Row{} : found[0];
}

// Both coverage programs (tests/mpi_coverage.cc, mpi_coverage_fortran.F90)
// run on a ring of 4 with the same point-to-point part: `rank`'s right is
// rank+1, its left rank-1, its partner rank^1.
struct Ring {
  explicit Ring(int rank)
      : right((rank + 1) % 4),
        left((rank + 3) % 4),
        partner(rank ^ 1),
        odd(rank % 2 == 1) {}
  int right, left, partner;
  bool odd;
};

// Exactly the names `rank` recorded, each this many times: `counts`, which
// names what is the program's own, and what both programs record: Init,
// Finalize, Comm_rank x5, Comm_size x3, 3 persistent sends and receives, a
// Sendrecv, 2 Pcontrols, 2 samples of each resource use counter, and the
// probes and receives of odd ranks (Improbe: polled) or sends of even ones.
void ExpectNames(const std::vector<Row>& rows, int rank,
                 std::map<std::string, size_t> counts) {
  counts.insert({{"MPI_Init", 1},
                 {"MPI_Finalize", 1},
                 {"MPI_Comm_rank", 5},
                 {"MPI_Comm_size", 3},
                 {"MPI_Send_init", 3},
                 {"MPI_Recv_init", 3},
                 {"MPI_Sendrecv", 1},
                 {"MPI_Pcontrol", 2},
                 {"rusage.user_ns", 2},
                 {"rusage.system_ns", 2},
                 {"rusage.max_rss_bytes", 2},
                 {"rusage.context_switches", 2}});
  if (Ring(rank).odd) {
    for (const char* name : {"MPI_Probe", "MPI_Iprobe", "MPI_Recv",
                             "MPI_Mprobe", "MPI_Mrecv", "MPI_Imrecv"}) {
      counts[name] = 1;
    }
    counts["MPI_Improbe"] = Select(rows, rank, "MPI_Improbe").size();
    EXPECT_GE(counts["MPI_Improbe"], 1u);
  } else {
    counts["MPI_Send"] = 3;
  }
  std::map<std::string, size_t> seen;
  for (const Row& r : rows) {
    if (r.rank == rank) ++seen[r.name];
  }
  // Each difference by name: the maps are too long to read whole.
  for (const auto& [name, n] : counts) {
    EXPECT_EQ(seen.count(name) ? seen[name] : 0, n) << name;
  }
  for (const auto& [name, n] : seen) {
    EXPECT_TRUE(counts.count(name)) << name << " recorded " << n << " times";
  }
}

// The point-to-point part both programs share, on `rank`: Comm_rank and
// Comm_size of the world, 3 persistent sends of 16 ints right and receives
// from the left (each start a span, issue to completion); even ranks send
// their partner 5 doubles with tags 11, 12, 13, which odd ranks Probe and
// Iprobe, Mprobe and Mrecv, Improbe and Imrecv; a Sendrecv of 3 ints each
// way with the right.
void ExpectSharedPointToPoint(const std::vector<Row>& rows, int rank) {
  const Ring ring(rank);
  for (const char* name : {"MPI_Comm_rank", "MPI_Comm_size"}) {
    for (const Row& r : Select(rows, rank, name)) {
      EXPECT_EQ(r.span.comm, 1u) << name;
      EXPECT_EQ(r.span.comm_size, 4u) << name;
    }
  }
  for (const Row& r : Select(rows, rank, "MPI_Send_init")) {
    EXPECT_EQ(r.span.bytes, 64);
    EXPECT_EQ(r.span.peer, ring.right);
    EXPECT_EQ(r.span.tag, 3);
    EXPECT_EQ(r.span.comm, 1u);
    ExpectCallTime(r);
  }
  for (const Row& r : Select(rows, rank, "MPI_Recv_init")) {
    EXPECT_EQ(r.span.bytes, 64);
    EXPECT_EQ(r.span.peer, ring.left);
    EXPECT_EQ(r.span.tag, 3);
    ExpectCallTime(r);
  }
  if (ring.odd) {
    const Row probe = One(rows, rank, "MPI_Probe");
    EXPECT_EQ(probe.span.peer, ring.partner);
    EXPECT_EQ(probe.span.tag, 11);
    EXPECT_EQ(probe.span.bytes, 0);
    EXPECT_EQ(One(rows, rank, "MPI_Iprobe").span.peer, ring.partner);
    const Row mprobe = One(rows, rank, "MPI_Mprobe");
    EXPECT_EQ(mprobe.span.peer, ring.partner);
    EXPECT_EQ(mprobe.span.tag, 12);
    const Row mrecv = One(rows, rank, "MPI_Mrecv");
    EXPECT_EQ(mrecv.span.peer, ring.partner);
    EXPECT_EQ(mrecv.span.tag, 12);
    EXPECT_EQ(mrecv.span.bytes, 40);
    EXPECT_EQ(mrecv.span.comm, 1u);
    int found = 0;
    for (const Row& r : Select(rows, rank, "MPI_Improbe")) {
      if (r.span.peer.has_value()) {
        ++found;
        EXPECT_EQ(r.span.peer, ring.partner);
        EXPECT_EQ(r.span.tag, 13);
      }
    }
    EXPECT_EQ(found, 1);
    const Row imrecv = One(rows, rank, "MPI_Imrecv");
    EXPECT_EQ(imrecv.span.peer, ring.partner);
    EXPECT_EQ(imrecv.span.tag, 13);
    EXPECT_EQ(imrecv.span.bytes, 40);
    ExpectCallTime(imrecv);
  } else {
    int tag = 11;
    for (const Row& r : Select(rows, rank, "MPI_Send")) {
      EXPECT_EQ(r.span.bytes, 40);
      EXPECT_EQ(r.span.peer, ring.partner);
      EXPECT_EQ(r.span.tag, tag++);
    }
  }
  const Row sendrecv = One(rows, rank, "MPI_Sendrecv");
  EXPECT_EQ(sendrecv.span.bytes, 24);
  EXPECT_EQ(IntArg(sendrecv.span, "send_bytes"), 12);
  EXPECT_EQ(sendrecv.span.peer, ring.right);
  EXPECT_EQ(sendrecv.span.tag, 5);
  // Its receive (MPI_STATUS_IGNORE given: the probe reads its own status).
  EXPECT_EQ(IntArg(sendrecv.span, "recv_peer"), ring.left);
  EXPECT_EQ(IntArg(sendrecv.span, "recv_tag"), 5);
}

// Two Pcontrol instants, levels 0 then 1; the resource use counters at
// MPI_Finalize and at exit, never decreasing.
void ExpectPcontrolAndResourceUse(const std::vector<Row>& rows, int rank) {
  const std::vector<Row> pcontrol = Select(rows, rank, "MPI_Pcontrol");
  ASSERT_EQ(pcontrol.size(), 2u);
  EXPECT_EQ(pcontrol[0].kind, v1::SPAN_KIND_INSTANT);
  EXPECT_EQ(IntArg(pcontrol[0].span, "level"), 0);
  EXPECT_EQ(IntArg(pcontrol[1].span, "level"), 1);
  for (const char* name : {"rusage.user_ns", "rusage.system_ns",
                           "rusage.max_rss_bytes", "rusage.context_switches"}) {
    const std::vector<Row> samples = Select(rows, rank, name);
    ASSERT_EQ(samples.size(), 2u) << name;
    EXPECT_EQ(samples[0].kind, v1::SPAN_KIND_COUNTER) << name;
    EXPECT_EQ(samples[0].category, v1::CATEGORY_MPI) << name;
    EXPECT_GE(samples[0].span.value, 0) << name;
    EXPECT_LE(samples[0].span.value, samples[1].span.value) << name;
  }
  EXPECT_GT(Select(rows, rank, "rusage.max_rss_bytes")[0].span.value, 1e6);
}

// What every rank of tests/mpi_coverage.cc recorded (see its comments).
void ExpectCoverage(const std::vector<Row>& rows) {
  std::set<uint64_t> windows, files, carts, graphs;
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(absl::StrCat("rank ", rank));
    const Ring ring(rank);
    const int right = ring.right, left = ring.left;
    ExpectNames(rows, rank,
                {
                    {"MPI_Waitall", 4},
                    {"MPI_Wait", ring.odd ? 5u : 4u},
                    {"MPI_Alltoallw", 1},
                    {"MPI_Ialltoallw", 1},
                    {"MPI_Cart_create", 1},
                    {"MPI_Comm_split", 1},
                    {"MPI_Alltoallv", 1},
                    {"MPI_Dist_graph_create_adjacent", 1},
                    {"MPI_Neighbor_allgather", 2},
                    {"MPI_Neighbor_allgatherv", 1},
                    {"MPI_Neighbor_alltoall", 1},
                    {"MPI_Neighbor_alltoallv", 1},
                    {"MPI_Neighbor_alltoallw", 1},
                    {"MPI_Ineighbor_allgather", 1},
                    {"MPI_Win_allocate", 1},
                    {"MPI_Win_fence", 4},
                    {"MPI_Put", 3},
                    {"MPI_Get", 1},
                    {"MPI_Accumulate", 1},
                    {"MPI_Win_lock", 1},
                    {"MPI_Win_unlock", 1},
                    {"MPI_Win_lock_all", 1},
                    {"MPI_Win_unlock_all", 1},
                    {"MPI_Fetch_and_op", 1},
                    {"MPI_Compare_and_swap", 1},
                    {"MPI_Win_flush", 1},
                    {"MPI_Win_flush_all", 1},
                    {"MPI_Rput", 1},
                    {"MPI_Rget", 1},
                    {"MPI_Get_accumulate", 1},
                    {"MPI_Raccumulate", 1},
                    {"MPI_Rget_accumulate", 1},
                    {"MPI_Win_post", 1},
                    {"MPI_Win_start", 1},
                    {"MPI_Win_complete", 1},
                    {"MPI_Win_wait", 1},
                    {"MPI_Win_free", 1},
                    {"MPI_Barrier", 3},
                    {"MPI_File_open", 1},
                    {"MPI_File_write_at", 1},
                    {"MPI_File_read_at", 1},
                    {"MPI_File_write_at_all", 1},
                    {"MPI_File_read_at_all", 1},
                    {"MPI_File_iwrite_at", 1},
                    {"MPI_File_iread_at", 1},
                    {"MPI_File_close", 1},
                });
    ExpectSharedPointToPoint(rows, rank);

    // World collectives in order: Alltoallw 0, Ialltoallw 1, Win_allocate
    // 2, Barrier 3, File_open 4, Barrier 5, (Barrier 6 paused), Barrier 7.
    EXPECT_EQ(One(rows, rank, "MPI_Comm_split").span.comm, 1u);
    // On the intercommunicator, the counts arrays have the remote group's
    // size: rank 0 sends 1 + 2 + 3 ints, rank r r ints.
    EXPECT_EQ(One(rows, rank, "MPI_Alltoallv").span.bytes,
              rank == 0 ? 24 : 4 * rank);
    const Row alltoallw = One(rows, rank, "MPI_Alltoallw");
    EXPECT_EQ(alltoallw.span.bytes, 40);
    EXPECT_EQ(alltoallw.span.seq, 0u);
    const Row ialltoallw = One(rows, rank, "MPI_Ialltoallw");
    EXPECT_EQ(ialltoallw.span.bytes, 40);
    EXPECT_EQ(ialltoallw.span.seq, 1u);
    ExpectCallTime(ialltoallw);
    EXPECT_EQ(One(rows, rank, "MPI_Win_allocate").span.seq, 2u);
    EXPECT_EQ(One(rows, rank, "MPI_File_open").span.seq, 4u);
    std::vector<uint64_t> barriers;
    for (const Row& r : Select(rows, rank, "MPI_Barrier")) {
      EXPECT_EQ(r.span.comm, 1u);
      barriers.push_back(r.span.seq.value_or(99));
    }
    EXPECT_EQ(barriers, (std::vector<uint64_t>{3, 5, 7}));

    // Neighbor collectives: bytes sent (to each neighbor, or summed over
    // both for v and w), instances on the cartesian ring 0..5.
    const std::vector<Row> allgather =
        Select(rows, rank, "MPI_Neighbor_allgather");
    ASSERT_EQ(allgather.size(), 2u);
    const Row& cart = allgather[0];
    EXPECT_EQ(cart.span.bytes, 8);
    EXPECT_EQ(cart.span.seq, 0u);
    EXPECT_EQ(cart.span.comm_size, 4u);
    EXPECT_NE(cart.span.comm, 1u);
    carts.insert(cart.span.comm);
    EXPECT_EQ(allgather[1].span.seq, 0u);
    EXPECT_NE(allgather[1].span.comm, cart.span.comm);
    graphs.insert(allgather[1].span.comm);
    const std::pair<const char*, int64_t> on_ring[] = {
        {"MPI_Neighbor_allgatherv", 8},
        {"MPI_Neighbor_alltoall", 4},
        {"MPI_Neighbor_alltoallv", 12},
        {"MPI_Neighbor_alltoallw", 12},
        {"MPI_Ineighbor_allgather", 8}};
    uint64_t seq = 1;
    for (const auto& [name, bytes] : on_ring) {
      const Row r = One(rows, rank, name);
      EXPECT_EQ(r.span.bytes, bytes) << name;
      EXPECT_EQ(r.span.comm, cart.span.comm) << name;
      EXPECT_EQ(r.span.seq, seq++) << name;
    }
    ExpectCallTime(One(rows, rank, "MPI_Ineighbor_allgather"));
    // Each lists the rank's in-neighbors ("sources"): on the ring per
    // dimension the -1, then the +1 neighbor; in the graph as given. Both
    // are left, then right.
    int listed = 0;
    for (const Row& r : rows) {
      if (r.rank != rank || !absl::StrContains(r.name, "eighbor_")) continue;
      ++listed;
      std::string sources;
      for (const StoredArg& a : r.span.args) {
        if (a.key == "sources") sources = a.str;
      }
      EXPECT_EQ(sources, absl::StrCat(left, ",", right)) << r.name;
    }
    EXPECT_EQ(listed, 7);

    // One-sided: every call on the window's id; fences are its instances
    // 0..3 and Win_free its 4th.
    const std::vector<Row> fences = Select(rows, rank, "MPI_Win_fence");
    ASSERT_EQ(fences.size(), 4u);
    const uint64_t window = fences[0].span.comm;
    windows.insert(window);
    EXPECT_NE(window, 1u);
    for (uint64_t i = 0; i < 4; ++i) {
      EXPECT_EQ(fences[i].span.comm, window);
      EXPECT_EQ(fences[i].span.comm_size, 4u);
      EXPECT_EQ(fences[i].span.seq, i);
    }
    const Row free = One(rows, rank, "MPI_Win_free");
    EXPECT_EQ(free.span.comm, window);
    EXPECT_EQ(free.span.seq, 4u);
    for (const Row& put : Select(rows, rank, "MPI_Put")) {
      EXPECT_EQ(put.span.peer, right);
      EXPECT_EQ(put.span.bytes, 4);
      EXPECT_EQ(put.span.comm, window);
    }
    const struct {
      const char* name;
      std::optional<int32_t> peer;
      int64_t bytes;
    } transfers[] = {
        {"MPI_Get", left, 8},
        {"MPI_Accumulate", right, 12},
        {"MPI_Fetch_and_op", left, 4},
        {"MPI_Compare_and_swap", left, 4},
        {"MPI_Rput", right, 4},
        {"MPI_Rget", left, 8},
        {"MPI_Get_accumulate", left, 4},
        {"MPI_Raccumulate", right, 4},
        {"MPI_Rget_accumulate", right, 4},
        {"MPI_Win_lock", right, 0},
        {"MPI_Win_unlock", right, 0},
        {"MPI_Win_flush", left, 0},
        {"MPI_Win_lock_all", std::nullopt, 0},
        {"MPI_Win_post", std::nullopt, 0},
        {"MPI_Win_wait", std::nullopt, 0},
    };
    for (const auto& t : transfers) {
      const Row r = One(rows, rank, t.name);
      EXPECT_EQ(r.span.peer, t.peer) << t.name;
      EXPECT_EQ(r.span.bytes, t.bytes) << t.name;
      EXPECT_EQ(r.span.comm, window) << t.name;
    }
    ExpectCallTime(One(rows, rank, "MPI_Rput"));
    ExpectCallTime(One(rows, rank, "MPI_Rget"));
    ExpectCallTime(One(rows, rank, "MPI_Raccumulate"));
    ExpectCallTime(One(rows, rank, "MPI_Rget_accumulate"));
    const Row lock = One(rows, rank, "MPI_Win_lock");
    ASSERT_EQ(lock.span.args.size(), 1u);
    EXPECT_EQ(lock.span.args[0].key, "lock_type");
    EXPECT_EQ(lock.span.args[0].str, "exclusive");

    // MPI-IO: the file's id; its collectives are instances 0..2.
    const Row write_at = One(rows, rank, "MPI_File_write_at");
    const uint64_t file = write_at.span.comm;
    files.insert(file);
    EXPECT_NE(file, 1u);
    EXPECT_NE(file, window);
    EXPECT_EQ(write_at.span.comm_size, 4u);
    EXPECT_EQ(write_at.span.bytes, 64);
    EXPECT_EQ(One(rows, rank, "MPI_File_read_at").span.bytes, 32);
    const Row write_all = One(rows, rank, "MPI_File_write_at_all");
    EXPECT_EQ(write_all.span.bytes, 16);
    EXPECT_EQ(write_all.span.seq, 0u);
    EXPECT_EQ(write_all.span.comm, file);
    const Row read_all = One(rows, rank, "MPI_File_read_at_all");
    EXPECT_EQ(read_all.span.bytes, 8);
    EXPECT_EQ(read_all.span.seq, 1u);
    for (const char* name : {"MPI_File_iwrite_at", "MPI_File_iread_at"}) {
      const Row r = One(rows, rank, name);
      EXPECT_EQ(r.span.bytes, 64) << name;
      EXPECT_EQ(r.span.comm, file) << name;
      ExpectCallTime(r);
    }
    const Row close = One(rows, rank, "MPI_File_close");
    EXPECT_EQ(close.span.comm, file);
    EXPECT_EQ(close.span.seq, 2u);

    ExpectPcontrolAndResourceUse(rows, rank);
  }
  // Window, file and topology ids are equal on every member.
  EXPECT_EQ(windows.size(), 1u);
  EXPECT_EQ(files.size(), 1u);
  EXPECT_EQ(carts.size(), 1u);
  EXPECT_EQ(graphs.size(), 1u);
}

TEST_F(MpiCaptureTest, EveryNewCallIsRecordedExactly) {
  StartCollector();
  Child agent = StartAgent();
  Child run =
      Spawn(MeridianRun("coverage", Mpirun({Runfile("tests/mpi_coverage"),
                                            dir_ + "/coverage.dat"})),
            env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  ExpectCoverage(ReadJob(db_, "coverage", /*with_accounting=*/true));

  // The communication matrix of the job, ring neighbors only: to its right
  // a rank sends 3 persistent sends (192 B), a Sendrecv's half (12 B), 3
  // Puts, an Rput and an Accumulate (28 B), an Raccumulate and an
  // Rget_accumulate (8 B), and the right neighbor's Get and Rget read from
  // it (16 B); even ranks also send their partner (the right one) 3 x 40 B.
  // To its left: a Fetch_and_op, a Compare_and_swap and a Get_accumulate
  // (12 B).
  auto meridian = [this](std::vector<std::string> args) {
    args.insert(args.begin(),
                {Runfile("cli/meridian"), "--collector", address_});
    Child child = Spawn(args, env_, /*merge_stderr=*/false);
    const std::string out = child.ReadAll();
    EXPECT_EQ(child.Wait(), 0) << out;
    return out;
  };
  std::string expected = "from,to,messages,bytes\n";
  for (int rank = 0; rank < 4; ++rank) {
    const int right = (rank + 1) % 4, left = (rank + 3) % 4;
    const std::string to_right =
        rank % 2 == 0 ? absl::StrCat(rank, ",", right, ",16,376\n")
                      : absl::StrCat(rank, ",", right, ",13,256\n");
    const std::string to_left = absl::StrCat(rank, ",", left, ",3,12\n");
    absl::StrAppend(&expected, left < right ? to_left : to_right,
                    left < right ? to_right : to_left);
  }
  EXPECT_EQ(meridian({"stats", "--job", "coverage", "--matrix", "--csv"}),
            expected);

  // mpitrace's per-rank profiles: each routine's calls as made.
  const std::string profiles = dir_ + "/profiles";
  meridian({"stats", "--job", "coverage", "--mpitrace", profiles});
  for (int rank = 0; rank < 4; ++rank) {
    FILE* f = fopen(absl::StrCat(profiles, "/mpi_profile.", rank).c_str(), "r");
    ASSERT_NE(f, nullptr) << rank;
    std::map<std::string, long> calls;
    bool windows = false;  // the job calls MPI_Pcontrol
    char line[512];
    while (fgets(line, sizeof(line), f) != nullptr) {
      windows |= strcmp(line,
                        "Times and statistics from summary_start() to "
                        "summary_stop().\n") == 0;
      char name[128];
      long n = 0;
      double bytes = 0, seconds = 0;
      if (sscanf(line, "%127s %ld %lf %lf", name, &n, &bytes, &seconds) == 4 &&
          absl::StartsWith(name, "MPI_") && calls.count(name) == 0) {
        calls[name] = n;  // the routine table comes first
      }
    }
    fclose(f);
    EXPECT_TRUE(windows) << rank;
    EXPECT_EQ(calls["MPI_Comm_rank"], 5) << rank;
    EXPECT_EQ(calls["MPI_Comm_size"], 3) << rank;
    EXPECT_EQ(calls["MPI_Win_fence"], 4) << rank;
    EXPECT_EQ(calls["MPI_Send_init"], 3) << rank;
    EXPECT_EQ(calls["MPI_Put"], 3) << rank;
    EXPECT_EQ(calls["MPI_File_iwrite_at"], 1) << rank;
  }
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

// The 1-based line of the first line of source `path` (a runfile) holding
// `text`; 0 if none does.
int LineOf(const std::string& path, const std::string& text) {
  FILE* f = fopen(Runfile(path).c_str(), "r");
  EXPECT_NE(f, nullptr) << path;
  if (f == nullptr) return 0;
  char line[1024];
  int number = 0, found = 0;
  while (found == 0 && fgets(line, sizeof(line), f) != nullptr) {
    ++number;
    if (strstr(line, text.c_str()) != nullptr) found = number;
  }
  fclose(f);
  return found;
}

// The span's string arg `key`, or "" if it has none.
std::string StringArg(const StoredSpan& span, const std::string& key) {
  for (const StoredArg& arg : span.args) {
    if (arg.key == key && arg.type == StoredArg::Type::kString) return arg.str;
  }
  return "";
}

// MERIDIAN_CALLSITES=1: every MPI call names the line of the program that
// made it (the programs are built with -g), from C and from Fortran, never
// a line inside MPI or the probe; a persistent request's starts name the
// MPI_Start/Startall that started them, not its init.
TEST_F(MpiCaptureTest, CallSitesNameTheLinesOfTheProgramsCalls) {
  StartCollector();
  Child agent = StartAgent();
  std::map<std::string, std::string> env = env_;
  env["MERIDIAN_CALLSITES"] = "1";
  struct Program {
    std::string job, binary, source, function, send, startall, start;
  };
  const Program c{"callsites-c", "tests/mpi_coverage", "tests/mpi_coverage.cc",
                  // Inlined into main: named as its DWARF scope is.
                  "Probes at ", "MPI_Send(values, 5", "MPI_Startall(2",
                  "MPI_Start(&requests[0])"};
  const Program fortran{"callsites-fortran",
                        "tests/mpi_coverage_mpifh",
                        "tests/mpi_coverage_fortran.F90",
                        "MAIN__ at ",
                        "call MPI_Send(doubles, 5",
                        "call MPI_Startall(2",
                        "call MPI_Start(requests(1)"};
  for (const Program& program : {c, fortran}) {
    SCOPED_TRACE(program.job);
    ASSERT_TRUE(Traced(
        program.job,
        Mpirun({Runfile(program.binary), dir_ + "/" + program.job + ".dat"}),
        env));
    const std::string file = program.source + ":";
    auto site = [&](const std::string& text) {
      return absl::StrCat(file, LineOf(program.source, text));
    };
    std::map<std::string, int> sends, starts;
    int calls = 0;
    for (const Row& row : ReadJob(db_, program.job, true)) {
      if (absl::StartsWith(row.name, "rusage.")) continue;
      ++calls;
      const std::string callsite = StringArg(row.span, "callsite");
      // In the program's own source, whichever call it is.
      EXPECT_NE(callsite.find(" at "), std::string::npos)
          << row.name << ": " << callsite;
      EXPECT_NE(callsite.find(file), std::string::npos)
          << row.name << ": " << callsite;
      const size_t at = callsite.find(file);
      const std::string where =
          at == std::string::npos ? callsite : callsite.substr(at);
      if (row.name == "MPI_Send") ++sends[callsite];
      if (row.name == "MPI_Send_init") ++starts[where];
    }
    EXPECT_GT(calls, 100);
    if (program.job == c.job) {
      // Only the even ranks send, 3 times each.
      EXPECT_EQ(sends, (std::map<std::string, int>{
                           {program.function + site(program.send), 6}}));
    } else {
      ASSERT_EQ(sends.size(), 1u);
      EXPECT_EQ(sends.begin()->second, 6);
      EXPECT_TRUE(absl::StartsWith(sends.begin()->first, program.function))
          << sends.begin()->first;
    }
    // Two Startalls and one Start per rank.
    EXPECT_EQ(starts, (std::map<std::string, int>{{site(program.startall), 8},
                                                  {site(program.start), 4}}));

    // meridian stats --by-callsite: the sends' one row, 6 calls of 40 B.
    Child stats =
        Spawn({Runfile("cli/meridian"), "--collector", address_, "stats",
               "--job", program.job, "--by-callsite", "--json"},
              env_, /*merge_stderr=*/false);
    const std::string json = stats.ReadAll();
    ASSERT_EQ(stats.Wait(), 0) << json;
    ASSERT_EQ(sends.size(), 1u);
    const std::string send_row = absl::StrCat(
        "{\"name\":\"MPI_Send\",\"category\":\"mpi\",", "\"callsite\":\"",
        sends.begin()->first, "\",\"calls\":6,\"bytes\":240,");
    EXPECT_NE(json.find(send_row), std::string::npos) << json;
  }
  StopAgent(agent);
}

// What every rank of tests/mpi_persistent.cc recorded (see its comments):
// each start of a persistent collective is an instance of MPI_COMM_WORLD
// with the next sequence number, one started while recording was stopped
// included; with `partitioned` (MPICH), the partitioned calls too.
void ExpectPersistent(const std::vector<Row>& rows, bool partitioned) {
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(rank);
    auto seqs = [&](const std::string& name, int64_t bytes, int root) {
      std::vector<uint64_t> out;
      for (const Row& r : Select(rows, rank, name)) {
        EXPECT_EQ(r.span.bytes, bytes) << name;
        EXPECT_EQ(r.span.comm, 1u) << name;
        EXPECT_EQ(r.span.comm_size, 4u) << name;
        EXPECT_EQ(r.span.peer,
                  root < 0 ? std::nullopt : std::optional<int32_t>(root))
            << name;
        ExpectCallTime(r);
        out.push_back(r.span.seq.value_or(UINT64_MAX));
      }
      return out;
    };
    EXPECT_EQ(seqs("MPI_Allreduce_init", 32, -1),
              (std::vector<uint64_t>{0, 1, 2}));
    ASSERT_EQ(Select(rows, rank, "MPI_Barrier").size(), 1u);
    EXPECT_EQ(Select(rows, rank, "MPI_Barrier")[0].span.seq, 3u);
    EXPECT_EQ(seqs("MPI_Bcast_init", 128, 2), (std::vector<uint64_t>{4, 5}));
    EXPECT_EQ(seqs("MPI_Barrier_init", 0, -1), (std::vector<uint64_t>{7}));
    if (!partitioned) continue;
    const std::vector<Row> sends = Select(rows, rank, "MPI_Psend_init");
    const std::vector<Row> receives = Select(rows, rank, "MPI_Precv_init");
    ASSERT_EQ(sends.size(), 1u);
    ASSERT_EQ(receives.size(), 1u);
    EXPECT_EQ(sends[0].span.bytes, 32);
    EXPECT_EQ(sends[0].span.peer, (rank + 1) % 4);
    EXPECT_EQ(sends[0].span.tag, 9);
    EXPECT_EQ(receives[0].span.bytes, 32);
    EXPECT_EQ(receives[0].span.peer, (rank + 3) % 4);
    EXPECT_EQ(receives[0].span.tag, 9);
    EXPECT_EQ(Select(rows, rank, "MPI_Pready").size(), 2u);
    EXPECT_EQ(Select(rows, rank, "MPI_Pready_range").size(), 1u);
  }
}

TEST_F(MpiCaptureTest, PersistentCollectivesAndPartitionedCallsAreRecorded) {
  StartCollector();
  Child agent = StartAgent();
  ASSERT_TRUE(Traced("persistent", Mpirun({Runfile("tests/mpi_persistent")})));
  ExpectPersistent(ReadJob(db_, "persistent"), /*partitioned=*/false);

  const std::string mpicxx = OnPath("mpicxx.mpich");
  const std::string mpiexec = OnPath("mpiexec.mpich");
  if (!mpicxx.empty() && !mpiexec.empty()) {
    const std::string program = dir_ + "/mpi_persistent_mpich";
    ASSERT_TRUE(Built(
        {mpicxx, "-O1", Runfile("tests/mpi_persistent.cc"), "-o", program}));
    env_["MPIEXEC_TIMEOUT"] = "120";
    ASSERT_TRUE(Traced("persistent-mpich", {mpiexec, "-n", "4", program}));
    ExpectPersistent(ReadJob(db_, "persistent-mpich"), /*partitioned=*/true);
  }
  StopAgent(agent);
}

// Open MPI's Fortran MPIX_*_INIT bindings call PMPIX_* directly: these
// records come from the probe's Fortran symbols (mpix_allreduce_init_ with
// mpif.h, mpix_allreduce_init_f08_ with mpi_f08), which call the C
// wrappers, so tests/mpi_persistent_fortran.F90 is recorded exactly as
// tests/mpi_persistent.cc is. It checks its own results too.
TEST_F(MpiCaptureTest, FortranPersistentCollectivesAreRecordedLikeC) {
  StartCollector();
  Child agent = StartAgent();
  for (const std::string binding : {"mpifh", "f08"}) {
    SCOPED_TRACE(binding);
    const std::string job = "fortran-persistent-" + binding;
    ASSERT_TRUE(
        Traced(job, Mpirun({Runfile("tests/mpi_persistent_" + binding)})));
    ExpectPersistent(ReadJob(db_, job), /*partitioned=*/false);
  }
  StopAgent(agent);
}

// What every rank of tests/mpi_coverage_fortran.F90 recorded (see its
// comments), under either MPI: Open MPI's Fortran names reach the probe's
// Fortran wrappers, MPICH's bindings its C ones.
void ExpectFortranCoverage(const std::vector<Row>& rows) {
  std::set<uint64_t> windows, files, carts, graphs;
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE(absl::StrCat("rank ", rank));
    const Ring ring(rank);
    const int right = ring.right, left = ring.left;
    std::map<std::string, size_t> counts = {
        {"MPI_Waitall", 3},
        {"MPI_Wait", ring.odd ? 6u : 5u},
        {"MPI_Alltoallw", 1},
        {"MPI_Ialltoallw", 1},
        {"MPI_Cart_create", 1},
        {"MPI_Dist_graph_create_adjacent", 1},
        {"MPI_Neighbor_allgather", 2},
        {"MPI_Neighbor_alltoallv", 1},
        {"MPI_Neighbor_alltoallw", 1},
        {"MPI_Ineighbor_allgather", 1},
        {"MPI_Win_allocate", 1},
        {"MPI_Win_fence", 3},
        {"MPI_Put", 1},
        {"MPI_Get", 1},
        {"MPI_Win_lock", 1},
        {"MPI_Win_unlock", 1},
        {"MPI_Rput", 1},
        {"MPI_Rget_accumulate", 1},
        {"MPI_Win_free", 1},
        {"MPI_File_write_at", 1},
        {"MPI_File_read_at", 1},
        {"MPI_File_write_at_all", 1},
        {"MPI_File_iread_at_all", 1},
        {"MPI_File_close", 1},
        {"MPI_Barrier", 2},
        {"MPI_File_open", 1},
    };
    ExpectNames(rows, rank, counts);
    ExpectSharedPointToPoint(rows, rank);

    // World instances in order: Alltoallw 0, Ialltoallw 1, Win_allocate 2,
    // File_open 3, then 3 Barriers, the second paused.
    const Row alltoallw = One(rows, rank, "MPI_Alltoallw");
    EXPECT_EQ(alltoallw.span.bytes, 40);
    EXPECT_EQ(alltoallw.span.seq, 0u);
    EXPECT_EQ(alltoallw.span.comm, 1u);
    const Row ialltoallw = One(rows, rank, "MPI_Ialltoallw");
    EXPECT_EQ(ialltoallw.span.bytes, 40);
    EXPECT_EQ(ialltoallw.span.seq, 1u);
    ExpectCallTime(ialltoallw);
    const Row allocate = One(rows, rank, "MPI_Win_allocate");
    EXPECT_EQ(allocate.span.seq, 2u);
    EXPECT_EQ(allocate.span.comm, 1u);
    EXPECT_EQ(One(rows, rank, "MPI_File_open").span.seq, 3u);
    std::vector<uint64_t> barriers;
    for (const Row& r : Select(rows, rank, "MPI_Barrier")) {
      EXPECT_EQ(r.span.comm, 1u);
      barriers.push_back(r.span.seq.value_or(99));
    }
    EXPECT_EQ(barriers, (std::vector<uint64_t>{4, 6}));

    // Neighbor collectives: the ring's instances 0..2, the graph's 0..1;
    // bytes sent to each neighbor, or summed over both for v and w.
    EXPECT_EQ(One(rows, rank, "MPI_Cart_create").span.comm, 1u);
    EXPECT_EQ(One(rows, rank, "MPI_Dist_graph_create_adjacent").span.comm, 1u);
    const std::vector<Row> allgather =
        Select(rows, rank, "MPI_Neighbor_allgather");
    ASSERT_EQ(allgather.size(), 2u);
    const Row& cart = allgather[0];
    EXPECT_EQ(cart.span.bytes, 8);
    EXPECT_EQ(cart.span.seq, 0u);
    EXPECT_EQ(cart.span.comm_size, 4u);
    EXPECT_NE(cart.span.comm, 1u);
    carts.insert(cart.span.comm);
    const Row alltoallv = One(rows, rank, "MPI_Neighbor_alltoallv");
    EXPECT_EQ(alltoallv.span.bytes, 12);
    EXPECT_EQ(alltoallv.span.comm, cart.span.comm);
    EXPECT_EQ(alltoallv.span.seq, 1u);
    const Row ineighbor = One(rows, rank, "MPI_Ineighbor_allgather");
    EXPECT_EQ(ineighbor.span.bytes, 8);
    EXPECT_EQ(ineighbor.span.comm, cart.span.comm);
    EXPECT_EQ(ineighbor.span.seq, 2u);
    ExpectCallTime(ineighbor);
    const Row& graph = allgather[1];
    EXPECT_EQ(graph.span.bytes, 8);
    EXPECT_EQ(graph.span.seq, 0u);
    EXPECT_NE(graph.span.comm, cart.span.comm);
    EXPECT_NE(graph.span.comm, 1u);
    graphs.insert(graph.span.comm);
    const Row alltoallw_graph = One(rows, rank, "MPI_Neighbor_alltoallw");
    EXPECT_EQ(alltoallw_graph.span.bytes, 12);
    EXPECT_EQ(alltoallw_graph.span.comm, graph.span.comm);
    EXPECT_EQ(alltoallw_graph.span.seq, 1u);

    // One-sided: every call on the window's id; fences are its instances
    // 0..2 and Win_free its 3rd.
    const std::vector<Row> fences = Select(rows, rank, "MPI_Win_fence");
    ASSERT_EQ(fences.size(), 3u);
    const uint64_t window = fences[0].span.comm;
    windows.insert(window);
    EXPECT_NE(window, 1u);
    for (uint64_t i = 0; i < 3; ++i) {
      EXPECT_EQ(fences[i].span.comm, window);
      EXPECT_EQ(fences[i].span.comm_size, 4u);
      EXPECT_EQ(fences[i].span.seq, i);
    }
    const Row free = One(rows, rank, "MPI_Win_free");
    EXPECT_EQ(free.span.comm, window);
    EXPECT_EQ(free.span.seq, 3u);
    const struct {
      const char* name;
      int32_t peer;
      int64_t bytes;
    } transfers[] = {
        {"MPI_Put", right, 4},      {"MPI_Get", left, 8},
        {"MPI_Win_lock", right, 0}, {"MPI_Win_unlock", right, 0},
        {"MPI_Rput", right, 4},     {"MPI_Rget_accumulate", right, 4},
    };
    for (const auto& t : transfers) {
      const Row r = One(rows, rank, t.name);
      EXPECT_EQ(r.span.peer, t.peer) << t.name;
      EXPECT_EQ(r.span.bytes, t.bytes) << t.name;
      EXPECT_EQ(r.span.comm, window) << t.name;
    }
    ExpectCallTime(One(rows, rank, "MPI_Rput"));
    ExpectCallTime(One(rows, rank, "MPI_Rget_accumulate"));

    // MPI-IO: the file's id (equal on every member however it was named);
    // its collectives are instances 0..2.
    const Row write_at = One(rows, rank, "MPI_File_write_at");
    const uint64_t file = write_at.span.comm;
    files.insert(file);
    EXPECT_NE(file, 1u);
    EXPECT_NE(file, window);
    EXPECT_EQ(write_at.span.comm_size, 4u);
    EXPECT_EQ(write_at.span.bytes, 64);
    const Row read_at = One(rows, rank, "MPI_File_read_at");
    EXPECT_EQ(read_at.span.bytes, 32);
    EXPECT_EQ(read_at.span.comm, file);
    const Row write_all = One(rows, rank, "MPI_File_write_at_all");
    EXPECT_EQ(write_all.span.bytes, 16);
    EXPECT_EQ(write_all.span.seq, 0u);
    EXPECT_EQ(write_all.span.comm, file);
    const Row iread_all = One(rows, rank, "MPI_File_iread_at_all");
    EXPECT_EQ(iread_all.span.bytes, 64);
    EXPECT_EQ(iread_all.span.seq, 1u);
    EXPECT_EQ(iread_all.span.comm, file);
    ExpectCallTime(iread_all);
    const Row close = One(rows, rank, "MPI_File_close");
    EXPECT_EQ(close.span.comm, file);
    EXPECT_EQ(close.span.seq, 2u);

    ExpectPcontrolAndResourceUse(rows, rank);
  }
  // Window, file and topology ids are equal on every member.
  EXPECT_EQ(windows.size(), 1u);
  EXPECT_EQ(files.size(), 1u);
  EXPECT_EQ(carts.size(), 1u);
  EXPECT_EQ(graphs.size(), 1u);
}

// Open MPI's Fortran bindings call PMPI_* directly: these records come from
// the probe's Fortran symbols for the wider coverage (mpi_put_ with
// mpif.h, mpi_put_f08_ with mpi_f08). tests/mpi_coverage_fortran.F90
// checks its own results, so a wrong conversion fails the job.
TEST_F(MpiCaptureTest, FortranNewCallsAreRecordedLikeC) {
  StartCollector();
  Child agent = StartAgent();
  for (const std::string binding : {"mpifh", "f08"}) {
    SCOPED_TRACE(binding);
    const std::string job = "fortran-coverage-" + binding;
    Child run =
        Spawn(MeridianRun(job, Mpirun({Runfile("tests/mpi_coverage_" + binding),
                                       dir_ + "/" + job + ".dat"})),
              env_);
    const std::string out = run.ReadAll();
    ASSERT_EQ(run.Wait(), 0) << out;
    ExpectFortranCoverage(ReadJob(db_, job, /*with_accounting=*/true));
  }
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

// Under MPICH the probe's Fortran names pass the calls on to MPICH's own
// bindings. Its mpif.h ones call the C functions, and so do its mpi_f08
// calls with a buffer (mpi_send_f08ts_); its mpi_f08 calls without one
// (mpi_wait_f08_, mpi_barrier_f08_, mpi_init_f08_...) call PMPI_*, and
// libmeridian_mpi_mpich.so wraps those (mpi_fortran_f08_mpich.cc). The
// same program, built with mpif.h and with mpi_f08, is recorded the same
// way either way, its MPI_File_open too. Skipped where MPICH is not
// installed.
TEST_F(MpiCaptureTest, MpichFortranNewCallsAreRecordedLikeC) {
  const std::string mpif90 = OnPath("mpif90.mpich");
  const std::string mpiexec = OnPath("mpiexec.mpich");
  if (mpif90.empty() || mpiexec.empty()) {
    GTEST_SKIP() << "MPICH is not installed (no mpif90.mpich or "
                    "mpiexec.mpich on PATH)";
  }
  StartCollector();
  Child agent = StartAgent();
  env_["MPIEXEC_TIMEOUT"] = "120";  // Hydra's --timeout
  for (const std::string binding : {"mpifh", "f08"}) {
    SCOPED_TRACE(binding);
    const std::string program = dir_ + "/mpi_coverage_mpich_" + binding;
    const std::string modules = dir_ + "/modules_" + binding;
    ASSERT_EQ(mkdir(modules.c_str(), 0700), 0);
    std::vector<std::string> command = {
        mpif90,
        "-O1",
        "-J",
        modules,
        Runfile("tests/mpi_coverage_fortran.F90"),
        "-o",
        program};
    if (binding == "f08") command.push_back("-DF08");
    Child compile = Spawn(command, env_);
    const std::string said = compile.ReadAll();
    ASSERT_EQ(compile.Wait(), 0) << said;
    const std::string job = "mpich-fortran-coverage-" + binding;
    Child run =
        Spawn(MeridianRun(job, {mpiexec, "-n", "4", program,
                                dir_ + "/coverage_" + binding + ".dat"}),
              env_);
    const std::string out = run.ReadAll();
    ASSERT_EQ(run.Wait(), 0) << out;
    EXPECT_FALSE(absl::StrContains(out, "are not recorded")) << out;
    ExpectFortranCoverage(ReadJob(db_, job, /*with_accounting=*/true));
  }
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

// The seed mpitrace profile's rank 0 (8 ranks), made again by a program
// with the same calls and sizes (tests/mpi_seed_profile.cc): `meridian
// stats --mpitrace` prints its routine table with mpitrace's counts and
// average bytes exactly.
TEST_F(MpiCaptureTest, TheSeedProfilesCountsAndBytesAreReproduced) {
  StartCollector();
  Child agent = StartAgent();
  std::vector<std::string> mpirun = Mpirun({Runfile("tests/mpi_seed_profile")});
  *(std::find(mpirun.begin(), mpirun.end(), "-np") + 1) = "8";
  Child run = Spawn(MeridianRun("seed", mpirun), env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  const std::string profiles = dir_ + "/seed-profiles";
  Child stats = Spawn({Runfile("cli/meridian"), "--collector", address_,
                       "stats", "--job", "seed", "--mpitrace", profiles},
                      env_);
  const std::string said = stats.ReadAll();
  ASSERT_EQ(stats.Wait(), 0) << said;
  FILE* f = fopen((profiles + "/mpi_profile.0").c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::map<std::string, std::string> table;  // routine -> "calls avg"
  // Message size distributions: routine -> its rows' "calls avg".
  std::map<std::string, std::vector<std::string>> bins;
  bool in_distributions = false;
  std::string routine;
  char line[512];
  while (fgets(line, sizeof(line), f) != nullptr) {
    char name[128];
    long calls = 0;
    double bytes = 0, seconds = 0;
    if (absl::StartsWith(line, "Message size distributions")) {
      in_distributions = true;
    } else if (in_distributions && sscanf(line, "%127s #calls", name) == 1 &&
               absl::StartsWith(name, "MPI_")) {
      routine = name;
    } else if (in_distributions && !routine.empty() &&
               sscanf(line, "%ld %lf %lf", &calls, &bytes, &seconds) == 3) {
      bins[routine].push_back(absl::StrFormat("%ld %.1f", calls, bytes));
    } else if (sscanf(line, "%127s %ld %lf %lf", name, &calls, &bytes,
                      &seconds) == 4 &&
               absl::StartsWith(name, "MPI_") && table.count(name) == 0) {
      table[name] = absl::StrFormat("%ld %.1f", calls, bytes);
    }
  }
  fclose(f);
  // The seed's rows exactly, in mpitrace's bins: its 128-byte Bcast
  // closes (64, 128], apart from the 211-byte ones.
  EXPECT_EQ(bins["MPI_Bcast"],
            (std::vector<std::string>{"34 4.0", "17 25.0", "1 128.0", "8 211.0",
                                      "1 281.0", "1 569.0", "2 2525.0"}));
  EXPECT_EQ(bins["MPI_Allreduce"],
            (std::vector<std::string>{"40 4.0", "8718 8.0"}));
  EXPECT_EQ(table, (std::map<std::string, std::string>{
                       {"MPI_Comm_rank", "5 0.0"},
                       {"MPI_Comm_size", "3 0.0"},
                       {"MPI_Bcast", "64 129.3"},
                       {"MPI_Barrier", "1 0.0"},
                       {"MPI_Allreduce", "8758 8.0"},
                       {"MPI_Gather", "29 4.0"},
                       {"MPI_Gatherv", "29 0.0"},
                       {"MPI_Allgather", "2 4.0"},
                   }));
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

TEST_F(MpiCaptureTest, MpichJobsAreRecordedLikeOpenMpiJobs) {
  const std::string mpicxx = OnPath("mpicxx.mpich");
  const std::string mpif90 = OnPath("mpif90.mpich");
  const std::string mpiexec = OnPath("mpiexec.mpich");
  if (mpicxx.empty() || mpif90.empty() || mpiexec.empty()) {
    GTEST_SKIP() << "MPICH is not installed (no mpicxx.mpich, mpif90.mpich "
                    "or mpiexec.mpich on PATH; deploy/dependencies.sh "
                    "installs Debian's mpich and libmpich-dev)";
  }
  const std::string known = dir_ + "/mpi_known_mpich";
  const std::string fortran = dir_ + "/mpi_known_fortran_mpich";
  const std::string local = dir_ + "/libmpi_local_ext_mpich.so";
  const std::string coverage = dir_ + "/mpi_coverage_mpich";
  for (const std::vector<std::string>& build :
       {std::vector<std::string>{
            mpicxx, "-O1", Runfile("tests/mpi_coverage.cc"), "-o", coverage},
        std::vector<std::string>{mpicxx, "-O1", "-I",
                                 Runfile("capture/probe/include"),
                                 Runfile("tests/mpi_known.cc"), "-o", known},
        std::vector<std::string>{mpif90, "-O1", "-J", dir_,
                                 Runfile("tests/mpi_known_fortran.F90"), "-o",
                                 fortran},
        std::vector<std::string>{mpicxx, "-O1", "-shared", "-fPIC",
                                 Runfile("tests/mpi_local_ext.cc"), "-o",
                                 local}}) {
    Child compile = Spawn(build, env_);
    const std::string said = compile.ReadAll();
    ASSERT_EQ(compile.Wait(), 0) << said;
  }
  StartCollector();
  Child agent = StartAgent();
  env_["MPIEXEC_TIMEOUT"] = "120";  // Hydra's --timeout
  const std::vector<std::vector<std::string>> jobs = {
      {"mpich", known},
      {"mpich-fortran", fortran},
      {"mpich-local", Runfile("tests/mpi_local_job"), local},
      {"mpich-coverage", coverage, dir_ + "/coverage.dat"}};
  for (const std::vector<std::string>& job : jobs) {
    SCOPED_TRACE(job[0]);
    std::vector<std::string> mpiexec_argv = {mpiexec, "-n", "4"};
    mpiexec_argv.insert(mpiexec_argv.end(), job.begin() + 1, job.end());
    Child run = Spawn(MeridianRun(job[0], mpiexec_argv), env_);
    const std::string out = run.ReadAll();
    ASSERT_EQ(run.Wait(), 0) << out;
    EXPECT_FALSE(absl::StrContains(out, "are not recorded")) << out;
    const std::vector<Row> rows = ReadJob(db_, job[0]);
    if (job[0] == "mpich-coverage") {
      ExpectCoverage(ReadJob(db_, job[0], /*with_accounting=*/true));
    }
    if (job[0] == "mpich") ExpectKnownSequence(rows);
    if (job[0] == "mpich-fortran") ExpectFortranSequence(rows);
    if (job[0] == "mpich-local") ExpectLocalSequence(rows);
  }
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

// A program that uses no MPI (a PyTorch worker, a data loader) gets no MPI
// library from the probe: tests/no_mpi_job records a step and a phase
// through the C API, then checks its own memory map.
TEST_F(MpiCaptureTest, AProgramWithoutMpiLoadsNoMpiLibraryAndIsRecorded) {
  StartCollector();
  Child agent = StartAgent();
  Child run = Spawn(MeridianRun("no-mpi", {Runfile("tests/no_mpi_job")}), env_);
  const std::string out = run.ReadAll();
  ASSERT_EQ(run.Wait(), 0) << out;
  EXPECT_TRUE(absl::StrContains(
      out, "no_mpi_job: traced, libmeridian_probe.so mapped, no MPI library\n"))
      << out;
  const std::vector<Row> rows = ReadJob(db_, "no-mpi");
  ASSERT_EQ(rows.size(), 2u);
  std::multiset<std::string> names;
  for (const Row& r : rows) {
    names.insert(r.name);
    EXPECT_EQ(r.category, v1::CATEGORY_USER);
    EXPECT_EQ(r.span.step, 0);
  }
  EXPECT_EQ(names, (std::multiset<std::string>{"load", "step"}));
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

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
               skew[1], "--clock-drift-ppm", skew[2], "--clock-sync-ms", "100"},
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

// One segment of a critical path as the edge tests compare it: rank, time
// class, name.
using PathStep = std::tuple<int, std::string, std::string>;

std::string PathText(const std::vector<PathStep>& path) {
  std::string text;
  for (const auto& [rank, time_class, name] : path) {
    absl::StrAppend(&text, "\n  rank ", rank, " ", time_class, " ", name);
  }
  return text;
}

// `meridian critical-path --job JOB --step STEP --json`'s segments, leaving
// out the glue that scheduling may or may not put on the path: the
// enclosing "step" span's own instants between calls, and untraced time.
std::vector<PathStep> CriticalPathOf(
    const std::string& address, const std::map<std::string, std::string>& env,
    const std::string& job, int step) {
  Child child =
      Spawn({Runfile("cli/meridian"), "--collector", address, "critical-path",
             "--job", job, "--step", absl::StrCat(step), "--json"},
            env, /*merge_stderr=*/false);
  const std::string json = child.ReadAll();
  EXPECT_EQ(child.Wait(), 0) << json;
  google::protobuf::Struct parsed;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &parsed).ok())
      << json;
  std::vector<PathStep> path;
  auto segments = parsed.fields().find("segments");
  if (segments == parsed.fields().end()) return path;
  for (const auto& v : segments->second.list_value().values()) {
    const auto& s = v.struct_value().fields();
    const std::string time_class = s.at("class").string_value();
    const std::string name = s.at("name").string_value();
    if (time_class == "untraced" || name == "step") continue;
    path.emplace_back(static_cast<int>(s.at("rank").number_value()), time_class,
                      name);
  }
  return path;
}

// The path from the first segment of `expected` on is `expected`. Before
// it lies only the step's opening, MPI calls (MPI_Init among them, as
// set-up): the tails of the calls that lined the ranks up before the step
// (which rank came last to them is scheduling's choice), a handshake. No
// computation.
void ExpectPathFrom(const std::vector<PathStep>& path,
                    const std::vector<PathStep>& expected) {
  auto first = std::find(path.begin(), path.end(), expected.front());
  ASSERT_NE(first, path.end()) << PathText(path);
  for (auto it = path.begin(); it != first; ++it) {
    // MPI_Init is set-up where the window reaches back to it.
    EXPECT_TRUE(
        std::get<1>(*it) == "communication" ||
        (std::get<1>(*it) == "set-up" && std::get<2>(*it) == "MPI_Init"))
        << PathText(path);
    EXPECT_TRUE(absl::StartsWith(std::get<2>(*it), "MPI_")) << PathText(path);
  }
  EXPECT_EQ(std::vector<PathStep>(first, path.end()), expected)
      << PathText(path);
}

// `meridian stragglers --job JOB --json`, parsed; nullopt if it failed or
// printed no JSON. *json: what it printed.
std::optional<google::protobuf::Struct> StragglersOf(
    const std::string& address, const std::map<std::string, std::string>& env,
    const std::string& job, std::string* json) {
  Child stragglers = Spawn({Runfile("cli/meridian"), "--collector", address,
                            "stragglers", "--job", job, "--json"},
                           env, /*merge_stderr=*/false);
  *json = stragglers.ReadAll();
  google::protobuf::Struct parsed;
  if (stragglers.Wait() != 0 ||
      !google::protobuf::util::JsonStringToMessage(*json, &parsed).ok()) {
    return std::nullopt;
  }
  return parsed;
}

// What tests/mpi_edges.cc neighbor recorded as job `job`: on a directed
// ring, rank 2 computes 80 ms before an MPI_Neighbor_alltoall; rank 3,
// whose one in-neighbor it is, waits for it there and then computes. Each
// rank's call lists its in-neighbor (one: an integer arg). The step's path
// runs through rank 2's compute, the neighbor edge to rank 3, and rank 3's
// compute. In the stragglers report rank 2 is the instance's last rank,
// and only rank 3 waited for it: the instance's wait is about its skew,
// not the three times that an all-to-all instance would have.
void ExpectNeighborEdge(const std::string& db, const std::string& address,
                        const std::map<std::string, std::string>& env,
                        const std::string& job) {
  const std::vector<Row> rows = ReadJob(db, job);
  for (int rank = 0; rank < 4; ++rank) {
    const Row r = One(rows, rank, "MPI_Neighbor_alltoall");
    EXPECT_EQ(IntArg(r.span, "sources"), (rank + 3) % 4) << rank;
    EXPECT_EQ(r.span.seq, 0u) << rank;
  }
  ExpectPathFrom(CriticalPathOf(address, env, job, 0),
                 {{2, "compute", "compute"},
                  {3, "communication", "MPI_Neighbor_alltoall"},
                  {3, "compute", "post"}});
  std::string json;
  const std::optional<google::protobuf::Struct> stragglers =
      StragglersOf(address, env, job, &json);
  ASSERT_TRUE(stragglers.has_value()) << json;
  const google::protobuf::Struct& parsed = *stragglers;
  int found = 0;
  for (const auto& v :
       parsed.fields().at("collectives").list_value().values()) {
    const auto& c = v.struct_value().fields();
    if (c.at("name").string_value() != "MPI_Neighbor_alltoall") continue;
    ++found;
    EXPECT_EQ(c.at("last_rank").number_value(), 2) << json;
    EXPECT_GT(c.at("wait_ns").number_value(), 0) << json;
    EXPECT_LT(c.at("wait_ns").number_value(),
              1.5 * c.at("skew_ns").number_value())
        << json;
  }
  EXPECT_EQ(found, 1) << json;
}

// What tests/mpi_edges.cc sendrecv recorded as job `job`: a halo exchange
// on a ring, each rank's MPI_Sendrecv a send to its right and a receive
// from its left (rank 3's from MPI_ANY_SOURCE, MPI_ANY_TAG: recorded as
// received). Rank 2 computes 80 ms before it; rank 3, which receives from
// rank 2, waits there, then computes. The step's path runs through rank
// 2's compute, the message to rank 3 and rank 3's compute; the stragglers
// report matches the step's four messages, rank 3 having waited for rank 2.
void ExpectSendrecvEdge(const std::string& db, const std::string& address,
                        const std::map<std::string, std::string>& env,
                        const std::string& job) {
  const std::vector<Row> rows = ReadJob(db, job);
  for (int rank = 0; rank < 4; ++rank) {
    const Row r = One(rows, rank, "MPI_Sendrecv");
    EXPECT_EQ(r.span.peer, (rank + 1) % 4) << rank;
    EXPECT_EQ(r.span.tag, 7) << rank;
    EXPECT_EQ(IntArg(r.span, "recv_peer"), (rank + 3) % 4) << rank;
    EXPECT_EQ(IntArg(r.span, "recv_tag"), 7) << rank;
  }
  ExpectPathFrom(CriticalPathOf(address, env, job, 0),
                 {{2, "compute", "compute"},
                  {3, "communication", "MPI_Sendrecv"},
                  {3, "compute", "post"}});
  std::string json;
  const std::optional<google::protobuf::Struct> stragglers =
      StragglersOf(address, env, job, &json);
  ASSERT_TRUE(stragglers.has_value()) << json;
  const google::protobuf::Struct& parsed = *stragglers;
  EXPECT_EQ(parsed.fields().at("messages").number_value(), 4) << json;
  for (const auto& v : parsed.fields().at("ranks").list_value().values()) {
    const auto& r = v.struct_value().fields();
    const int rank = static_cast<int>(r.at("rank").number_value());
    auto field = [&r](const char* name) {
      auto it = r.find(name);
      return it == r.end() ? 0.0 : it->second.number_value();
    };
    if (rank == 2) {
      EXPECT_GT(field("late_sender_wait_ns"), 0) << json;
    } else if (rank == 3) {
      EXPECT_GT(field("waited_ns"), 0) << json;
    }
  }
  // The step's graph: the four messages, at least the one rank 3's end
  // waited for drawn as binding (a receive that began before its send did
  // is bound to it too, as scheduling has it).
  const std::string dot = absl::StrCat(db, ".", job, ".dot");  // beside it
  Child graph = Spawn({Runfile("cli/meridian"), "--collector", address, "graph",
                       "--job", job, "--step", "0", "-o", dot},
                      env, /*merge_stderr=*/true);
  const std::string graph_out = graph.ReadAll();
  ASSERT_EQ(graph.Wait(), 0) << graph_out;
  std::ifstream in(dot);
  int messages = 0, bound = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.find("type=\"message\"") == std::string::npos) continue;
    ++messages;
    if (line.find("binding=true") != std::string::npos) ++bound;
  }
  EXPECT_EQ(messages, 4);
  EXPECT_GE(bound, 1);
}

// What tests/mpi_edges.cc rma recorded as job `job`. Step 0: rank 1
// computes 80 ms before its Put and the epoch-ending MPI_Win_fence, which
// every rank leaves after it came; rank 3 then computes. Step 1: rank 0
// holds an exclusive lock on rank 1's memory while it computes 80 ms; rank
// 2's exclusive epoch on the same target waits for rank 0's MPI_Win_unlock
// (Open MPI and MPICH take the lock in MPI_Win_lock here, so that is where
// rank 2 waited), then rank 2 computes. Each path runs through the
// computation, the edge, and the computation after it; step 1 opens with
// rank 0's lock and the two ranks' handshake, in an order scheduling
// decides. Each Win_lock says its lock type.
void ExpectRmaEdges(const std::string& db, const std::string& address,
                    const std::map<std::string, std::string>& env,
                    const std::string& job) {
  const std::vector<Row> rows = ReadJob(db, job);
  for (int rank : {0, 2}) {
    const Row lock = One(rows, rank, "MPI_Win_lock");
    ASSERT_EQ(lock.span.args.size(), 1u) << rank;
    EXPECT_EQ(lock.span.args[0].key, "lock_type") << rank;
    EXPECT_EQ(lock.span.args[0].str, "exclusive") << rank;
    EXPECT_EQ(lock.span.peer, 1) << rank;
  }
  ExpectPathFrom(CriticalPathOf(address, env, job, 0),
                 {{1, "compute", "compute"},
                  {1, "communication", "MPI_Put"},
                  {3, "communication", "MPI_Win_fence"},
                  {3, "compute", "post"}});
  ExpectPathFrom(CriticalPathOf(address, env, job, 1),
                 {{0, "compute", "compute"},
                  {2, "communication", "MPI_Win_lock"},
                  {2, "communication", "MPI_Wait"},
                  {2, "communication", "MPI_Put"},
                  {2, "communication", "MPI_Win_unlock"},
                  {2, "compute", "post"}});
}

// The lock type of each of `rank`'s MPI_Win_lock spans, by step.
std::map<int64_t, std::string> LockTypes(const std::vector<Row>& rows,
                                         int rank) {
  std::map<int64_t, std::string> types;
  for (const Row& lock : Select(rows, rank, "MPI_Win_lock")) {
    EXPECT_EQ(lock.span.peer, 1) << rank;
    types[lock.span.step.value_or(-1)] = StringArg(lock.span, "lock_type");
  }
  return types;
}

// What tests/mpi_edges.cc locks recorded as job `job`. Step 0: rank 0
// holds a shared lock on rank 1's memory while it computes 80 ms (rank 3's
// shared epoch ended before); rank 2's exclusive epoch waits for rank 0's
// MPI_Win_unlock, the later of the two shared epochs' unlocks, then rank 2
// computes. Step 1: rank 0 holds an exclusive lock while it computes; rank
// 2's MPI_Win_lock_all (no target: a shared lock on every one) waits for
// its MPI_Win_unlock. Open MPI and MPICH take both in the call that asks
// for the lock, so that is where rank 2 waited; each path runs through
// rank 0's computation, that call, and rank 2's computation after it.
void ExpectLockEdges(const std::string& db, const std::string& address,
                     const std::map<std::string, std::string>& env,
                     const std::string& job) {
  const std::vector<Row> rows = ReadJob(db, job);
  using Types = std::map<int64_t, std::string>;
  EXPECT_EQ(LockTypes(rows, 0), (Types{{0, "shared"}, {1, "exclusive"}}));
  EXPECT_EQ(LockTypes(rows, 2), (Types{{0, "exclusive"}}));
  EXPECT_EQ(LockTypes(rows, 3), (Types{{0, "shared"}}));
  const Row lock_all = One(rows, 2, "MPI_Win_lock_all");
  EXPECT_FALSE(lock_all.span.peer.has_value());
  EXPECT_EQ(lock_all.span.step, 1);
  ExpectPathFrom(CriticalPathOf(address, env, job, 0),
                 {{0, "compute", "compute"},
                  {2, "communication", "MPI_Win_lock"},
                  {2, "communication", "MPI_Wait"},
                  {2, "communication", "MPI_Put"},
                  {2, "communication", "MPI_Win_unlock"},
                  {2, "compute", "post"}});
  ExpectPathFrom(CriticalPathOf(address, env, job, 1),
                 {{0, "compute", "compute"},
                  {2, "communication", "MPI_Win_lock_all"},
                  {2, "communication", "MPI_Wait"},
                  {2, "communication", "MPI_Get"},
                  {2, "communication", "MPI_Win_unlock_all"},
                  {2, "compute", "post"}});
}

// What tests/mpi_edges.cc pscw recorded as job `job`: rank 3's MPI_Win_post
// names its origins, ranks 0 to 2 (world ranks, in group order), each
// origin's MPI_Win_start its target, rank 3 (one: an integer arg). Step 0:
// rank 1 computes 80 ms before its MPI_Win_complete; rank 3's MPI_Win_wait
// returns only after it began, and rank 3 then computes. The path runs
// through rank 1's computation, rank 3's Win_wait and its computation.
// Step 1: rank 3 computes 80 ms before its MPI_Win_post; rank 0's
// MPI_Win_start returns only after it began (Open MPI and MPICH wait
// there), and rank 0 computes after its MPI_Win_complete. The path runs
// through rank 3's computation, rank 0's epoch and its computation.
void ExpectPscwEdge(const std::string& db, const std::string& address,
                    const std::map<std::string, std::string>& env,
                    const std::string& job) {
  const std::vector<Row> rows = ReadJob(db, job);
  const std::vector<Row> posts = Select(rows, 3, "MPI_Win_post");
  EXPECT_EQ(posts.size(), 2u);
  for (const Row& post : posts) {
    EXPECT_EQ(StringArg(post.span, "group"), "0,1,2");
  }
  EXPECT_TRUE(Select(rows, 3, "MPI_Win_start").empty());
  for (int rank = 0; rank < 3; ++rank) {
    const std::vector<Row> starts = Select(rows, rank, "MPI_Win_start");
    EXPECT_EQ(starts.size(), 2u) << rank;
    for (const Row& start : starts) {
      EXPECT_EQ(IntArg(start.span, "group"), 3) << rank;
    }
    for (const Row& complete : Select(rows, rank, "MPI_Win_complete")) {
      EXPECT_TRUE(complete.span.args.empty()) << rank;
    }
  }
  ExpectPathFrom(CriticalPathOf(address, env, job, 0),
                 {{1, "compute", "compute"},
                  {3, "communication", "MPI_Win_wait"},
                  {3, "compute", "post"}});
  ExpectPathFrom(CriticalPathOf(address, env, job, 1),
                 {{3, "compute", "compute"},
                  {0, "communication", "MPI_Win_start"},
                  {0, "communication", "MPI_Put"},
                  {0, "communication", "MPI_Win_complete"},
                  {0, "compute", "post"}});
}

TEST_F(MpiCaptureTest, CriticalPathCrossesANeighborCollectiveEdge) {
  CheckEdges("neighbor", ExpectNeighborEdge);
}

TEST_F(MpiCaptureTest, CriticalPathCrossesASendrecvMessage) {
  CheckEdges("sendrecv", ExpectSendrecvEdge);
}

TEST_F(MpiCaptureTest, CriticalPathCrossesFenceAndLockEpochEdges) {
  CheckEdges("rma", ExpectRmaEdges);
}

TEST_F(MpiCaptureTest, CriticalPathCrossesSharedAndExclusiveLockEdges) {
  CheckEdges("locks", ExpectLockEdges);
}

TEST_F(MpiCaptureTest, CriticalPathCrossesAPostStartCompleteWaitEdge) {
  CheckEdges("pscw", ExpectPscwEdge);
}

// The same jobs built with MPICH's compiler and run by its mpiexec: the
// same args and the same paths. Skipped where MPICH is not installed.
TEST_F(MpiCaptureTest, CriticalPathCrossesTheSameEdgesUnderMpich) {
  const std::string mpicxx = OnPath("mpicxx.mpich");
  const std::string mpiexec = OnPath("mpiexec.mpich");
  if (mpicxx.empty() || mpiexec.empty()) {
    GTEST_SKIP() << "MPICH is not installed (no mpicxx.mpich or "
                    "mpiexec.mpich on PATH; deploy/dependencies.sh installs "
                    "Debian's mpich and libmpich-dev)";
  }
  const std::string edges = dir_ + "/mpi_edges_mpich";
  ASSERT_TRUE(Built({mpicxx, "-O1", "-I", Runfile("capture/probe/include"),
                     Runfile("tests/mpi_edges.cc"), "-o", edges}));
  StartCollector();
  Child agent = StartAgent();
  env_["MPIEXEC_TIMEOUT"] = "120";  // Hydra's --timeout
  for (const char* mode : {"neighbor", "sendrecv", "rma", "locks", "pscw"}) {
    const std::string job = absl::StrCat("mpich-", mode);
    ASSERT_TRUE(Traced(job, {mpiexec, "-n", "4", edges, mode}));
  }
  ExpectNeighborEdge(db_, address_, env_, "mpich-neighbor");
  ExpectSendrecvEdge(db_, address_, env_, "mpich-sendrecv");
  ExpectRmaEdges(db_, address_, env_, "mpich-rma");
  ExpectLockEdges(db_, address_, env_, "mpich-locks");
  ExpectPscwEdge(db_, address_, env_, "mpich-pscw");
  StopAgent(agent);
}

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
// of them can be descheduled (a CI run saw 7 % over the window); the median
// step is what a run of the unchanged job would give.
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
  ASSERT_TRUE(Traced("replay-slow", job("8000", "1000")));
  ASSERT_TRUE(Traced("replay-even", job("0", "1000")));
  ASSERT_TRUE(Traced("replay-delay", job("0", "6000")));
  StopAgent(agent);
  const std::vector<std::string> window = {"--steps", "2:29"};
  std::map<std::string, google::protobuf::Struct> same;
  for (const char* name : {"replay-slow", "replay-even", "replay-delay"}) {
    same[name] = ReplayOf(address_, env_, name, window);
    const double measured = Field(same[name], "measured_ns");
    EXPECT_GT(measured, 28 * 9e6) << name;
    EXPECT_NEAR(Field(same[name], "predicted_ns") / measured, 1.0, 0.01)
        << name;
  }
  for (const auto& step :
       same["replay-slow"].fields().at("steps").list_value().values()) {
    const auto& s = step.struct_value();
    EXPECT_NEAR(Field(s, "predicted_ns") / Field(s, "measured_ns"), 1.0, 0.01)
        << "step " << Field(s, "step");
  }
  const double even = Field(same["replay-even"], "measured_ns");
  // The straggler is real: "slow" takes 8 ms more a step.
  EXPECT_GT(Field(same["replay-slow"], "measured_ns"), 1.5 * even);

  std::vector<std::string> flags = window;
  flags.insert(flags.end(), {"--rank-like", "1=0"});
  const google::protobuf::Struct fixed =
      ReplayOf(address_, env_, "replay-slow", flags);
  flags = window;
  flags.insert(flags.end(), {"--scale", "pack=0.1666667"});
  const google::protobuf::Struct shorter =
      ReplayOf(address_, env_, "replay-delay", flags);
  const double even_step = MedianStep(same["replay-even"], "measured_ns");
  EXPECT_GT(even_step, 9e6);
  EXPECT_NEAR(MedianStep(fixed, "predicted_ns") / even_step, 1.0, 0.05);
  EXPECT_NEAR(MedianStep(shorter, "predicted_ns") / even_step, 1.0, 0.05);
  EXPECT_NEAR(Field(fixed, "predicted_ns") / even, 1.0, 0.10);
  EXPECT_NEAR(Field(shorter, "predicted_ns") / even, 1.0, 0.10);
  printf(
      "replay figures (steps 2..29, ms): even measured %.3f; slow measured "
      "%.3f, unchanged %.3f, --rank-like 1=0 %.3f (%.2f%% off even); delay "
      "measured %.3f, unchanged %.3f, --scale pack %.3f (%.2f%% off even)\n",
      even / 1e6, Field(same["replay-slow"], "measured_ns") / 1e6,
      Field(same["replay-slow"], "predicted_ns") / 1e6,
      Field(fixed, "predicted_ns") / 1e6,
      100 * (Field(fixed, "predicted_ns") / even - 1),
      Field(same["replay-delay"], "measured_ns") / 1e6,
      Field(same["replay-delay"], "predicted_ns") / 1e6,
      Field(shorter, "predicted_ns") / 1e6,
      100 * (Field(shorter, "predicted_ns") / even - 1));
}

}  // namespace
}  // namespace meridian
