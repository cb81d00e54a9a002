// MPI capture end to end (tests/mpi_capture_fixture.h): the wider coverage of
// MPI calls from C (tests/mpi_coverage.cc: one-sided, MPI-IO, neighbor
// collectives, matched probes...), the call sites that name the program's
// lines, and persistent collectives and partitioned calls.
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "testing/runfile.h"
#include "tests/mpi_capture_fixture.h"

namespace meridian {
namespace mpi_capture {
namespace {

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

}  // namespace
}  // namespace mpi_capture
}  // namespace meridian
