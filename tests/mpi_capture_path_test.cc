// MPI capture end to end (tests/mpi_capture_fixture.h): the critical path of
// real jobs (tests/mpi_edges.cc) crosses a neighbor collective's, a message's
// and one-sided epochs' edges, under Open MPI and MPICH.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "testing/runfile.h"
#include "tests/mpi_capture_fixture.h"

namespace meridian {
namespace mpi_capture {
namespace {

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

}  // namespace
}  // namespace mpi_capture
}  // namespace meridian
