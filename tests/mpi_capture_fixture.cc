// The shared parts of the MPI capture tests (tests/mpi_capture_fixture.h).
#include "tests/mpi_capture_fixture.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "meridian/v1/span.pb.h"
#include "store/store.h"
#include "testing/runfile.h"
#include "tests/collector_process.h"

namespace meridian {
namespace mpi_capture {

std::string Child::ReadLine() {
  char line[1024];
  return fgets(line, sizeof(line), out) ? line : "";
}

std::string Child::ReadAll() {
  std::string all;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), out)) > 0) all.append(buffer, n);
  return all;
}

int Child::Wait() {
  int status = 0;
  waitpid(pid, &status, 0);
  if (out) fclose(out);
  out = nullptr;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Child Spawn(const std::vector<std::string>& argv,
            const std::map<std::string, std::string>& env, bool merge_stderr) {
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

bool IsAccounting(const std::string& name) {
  return absl::StartsWith(name, "rusage.") || name == "MPI_Comm_rank" ||
         name == "MPI_Comm_size";
}

std::vector<Row> ReadJob(const std::string& db, const std::string& job,
                         bool with_accounting) {
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
        if (!with_accounting &&
            (IsAccounting(op->name) || track->name == "node counters")) {
          return true;
        }
        rows.push_back({rank_of_process[track->process_id], op->name,
                        op->category, span.kind, track->name, track->kind,
                        span});
        return true;
      });
  EXPECT_TRUE(scan.ok()) << scan;
  return rows;
}

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

Row One(const std::vector<Row>& rows, int rank, const std::string& name) {
  const std::vector<Row> found = Select(rows, rank, name);
  EXPECT_EQ(found.size(), 1u) << name;
  return found.empty() ? Row{} : found[0];
}

std::optional<int64_t> IntArg(const StoredSpan& span, const std::string& key) {
  for (const StoredArg& arg : span.args) {
    if (arg.key == key && arg.type == StoredArg::Type::kInt) {
      return arg.int_value;
    }
  }
  return std::nullopt;
}

std::string StringArg(const StoredSpan& span, const std::string& key) {
  for (const StoredArg& arg : span.args) {
    if (arg.key == key && arg.type == StoredArg::Type::kString) return arg.str;
  }
  return "";
}

void ExpectCallTime(const Row& row) {
  const std::optional<int64_t> call_ns = IntArg(row.span, "call_ns");
  ASSERT_TRUE(call_ns.has_value()) << row.name;
  EXPECT_GE(*call_ns, 0) << row.name;
  EXPECT_LE(*call_ns, row.span.dur_ns) << row.name;
}

void MpiCaptureTest::SetUp() {
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

void MpiCaptureTest::TearDown() {
  std::string command = "rm -rf " + dir_;
  (void)!system(command.c_str());
}

void MpiCaptureTest::StartCollector(const std::string& listen) {
  auto collector = CollectorProcess::Start(
      Runfile("collector/meridian-collector"), db_, listen);
  ASSERT_TRUE(collector.ok()) << collector.status();
  collector_.emplace(std::move(*collector));
  address_ = collector_->address();
}

Child MpiCaptureTest::StartAgent(const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {Runfile("agent/meridian-agent"),
                                   "--collector", address_, "--socket", socket_,
                                   "--spool", dir_ + "/spool",
                                   // These tests count every span: no node
                                   // counters (tests/health_test.sh has them).
                                   "--node-counters-ms", "0"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  Child agent = Spawn(argv, env_, /*merge_stderr=*/false);
  EXPECT_TRUE(absl::StartsWith(agent.ReadLine(), "meridian-agent "));
  return agent;
}

std::vector<std::string> MpiCaptureTest::Mpirun(
    std::vector<std::string> program) {
  // A job that hangs is killed after 60 s with every rank's stack and
  // state in the failure (gdb): the f08 persistent-collectives job hung
  // once in CI and never since, so the next hang says where.
  std::vector<std::string> argv = {
      "mpirun", "--allow-run-as-root", "--oversubscribe",           "--timeout",
      "60",     "--get-stack-traces",  "--report-state-on-timeout", "-np",
      "4"};
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

std::vector<std::string> MpiCaptureTest::MeridianRun(
    const std::string& job, std::vector<std::string> command) {
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

bool MpiCaptureTest::Traced(const std::string& job,
                            std::vector<std::string> command,
                            const std::map<std::string, std::string>& env) {
  Child run = Spawn(MeridianRun(job, std::move(command)), env);
  const std::string out = run.ReadAll();
  const int status = run.Wait();
  EXPECT_EQ(status, 0) << job << ": " << out;
  return status == 0;
}

bool MpiCaptureTest::Traced(const std::string& job,
                            std::vector<std::string> command) {
  return Traced(job, std::move(command), env_);
}

bool MpiCaptureTest::Built(const std::vector<std::string>& argv) {
  Child compile = Spawn(argv, env_);
  const std::string said = compile.ReadAll();
  const int status = compile.Wait();
  EXPECT_EQ(status, 0) << said;
  return status == 0;
}

void MpiCaptureTest::CheckEdges(const std::string& mode, JobCheck check) {
  StartCollector();
  Child agent = StartAgent();
  ASSERT_TRUE(Traced(mode, Mpirun({Runfile("tests/mpi_edges"), mode})));
  check(db_, address_, env_, mode);
  StopAgent(agent);
}

void MpiCaptureTest::StopAgent(Child& agent) {
  kill(agent.pid, SIGTERM);
  EXPECT_EQ(agent.Wait(), 0);
}

std::string MpiCaptureTest::AgentStatus() {
  Child status = Spawn(
      {Runfile("agent/meridian-agent"), "--status", "--socket", socket_}, env_);
  const std::string out = status.ReadAll();
  EXPECT_EQ(status.Wait(), 0) << out;
  return out;
}

int MpiCaptureTest::Flush() {
  Child flush = Spawn({Runfile("agent/meridian-agent"), "--flush", "--timeout",
                       "60", "--socket", socket_},
                      env_);
  const std::string out = flush.ReadAll();
  const int code = flush.Wait();
  EXPECT_TRUE(absl::StrContains(out, "state delivered")) << out;
  return code;
}

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

}  // namespace mpi_capture
}  // namespace meridian
