// MPI capture end to end (tests/mpi_capture_fixture.h): Fortran programs,
// with mpif.h and with mpi_f08, under Open MPI and MPICH, recorded as their
// C counterparts are: the known sequence, persistent collectives and the
// wider coverage.
#include <signal.h>
#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <set>
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

}  // namespace
}  // namespace mpi_capture
}  // namespace meridian
