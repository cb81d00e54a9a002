// MPI capture end to end (tests/mpi_capture_fixture.h): the known sequence of
// MPI calls (tests/mpi_known.cc) as every rank made it, its export and
// analyses, MPI of a library loaded locally or not traced at all, the seed
// mpitrace profile, the same programs under MPICH, and a program without MPI.
#include <signal.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "meridian/v1/span.pb.h"
#include "testing/runfile.h"
#include "tests/mpi_capture_fixture.h"

namespace meridian {
namespace mpi_capture {
namespace {

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

// MPICH (Debian's mpich): the known sequences built with MPICH's compilers
// and run by its mpiexec (Hydra) arrive exactly as under Open MPI, recorded
// by libmeridian_mpi_mpich.so, which libmeridian_probe.so loaded for the
// program's libmpich. The Fortran one (mpif.h) goes through MPICH's own
// Fortran bindings, which call the C functions; tests/mpi_local_job loads
// its libmpich RTLD_LOCAL, as Python would. Skipped where MPICH is not
// installed.
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

}  // namespace
}  // namespace mpi_capture
}  // namespace meridian
