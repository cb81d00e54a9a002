// MPI capture end to end, with real parts: a real collector, a real
// meridian-agent, `meridian run` and Open MPI's mpirun with 4 ranks running
// tests/mpi_known.cc, and the Python binding. What the collector stored is
// read back from its SQLite file and compared exactly.
//
// Synchronization is by blocking reads (the collector's and agent's ready
// lines, FIFOs the MPI program opens, the agent's flush answer), never by
// sleeping.
//
// This header holds what the tests share: the fixture (MpiCaptureTest),
// child processes, the stored spans read back as Rows, and the expectations
// of the test programs that more than one test file runs. The tests are in
// tests/mpi_capture_*_test.cc and tests/replay_mpi_test.cc.
#ifndef MERIDIAN_TESTS_MPI_CAPTURE_FIXTURE_H_
#define MERIDIAN_TESTS_MPI_CAPTURE_FIXTURE_H_

#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "meridian/v1/span.pb.h"
#include "store/store.h"
#include "tests/collector_process.h"

namespace meridian {
namespace mpi_capture {

// A child process with its stdout (and stderr) on a pipe.
struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;

  // The next line of its output, newline included; "" at its end.
  std::string ReadLine();
  // Its output to the end (until it and its children close the pipe).
  std::string ReadAll();
  // The exit code, or 128 + signal.
  int Wait();
};

// Starts `argv` (argv[0] looked up on PATH) with `env` set on top of this
// process's environment; its stdout, and with `merge_stderr` its stderr,
// on the Child's pipe.
Child Spawn(const std::vector<std::string>& argv,
            const std::map<std::string, std::string>& env,
            bool merge_stderr = true);

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
bool IsAccounting(const std::string& name);

// The spans of `job` in the SQLite store `db`, in the store's scan order;
// the IsAccounting ones, and the node counters an agent samples beside a
// job of over a second (its "node counters" track: an agent that `meridian
// run` starts samples them), only `with_accounting`. A store or job that
// cannot be read fails the test and gives none.
std::vector<Row> ReadJob(const std::string& db, const std::string& job,
                         bool with_accounting = false);

// The full path of `program` on $PATH, or "" where there is none.
std::string OnPath(const std::string& program);

// The spans of `rank` named `name`, in `rows`' order.
std::vector<Row> Select(const std::vector<Row>& rows, int rank,
                        const std::string& name);

// The one span named `name` of `rank`: a failure unless there is exactly
// one; an empty Row if there is none.
Row One(const std::vector<Row>& rows, int rank, const std::string& name);

// The span's integer arg `key`, if it has one.
std::optional<int64_t> IntArg(const StoredSpan& span, const std::string& key);

// The span's string arg `key`, or "" if it has none.
std::string StringArg(const StoredSpan& span, const std::string& key);

// A non-blocking call's time inside its issuing call: present, and within
// the span (issue to completion).
void ExpectCallTime(const Row& row);

// Each test has a directory of its own, dir_ (removed after it), holding the
// agent's socket (socket_) and the collector's store (db_), and env_: the
// environment in which `meridian run` traces with the probe built here, its
// PATH's `mpirun` Open MPI's.
class MpiCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Starts a collector on `listen` storing into db_; address_ is where it
  // listens. Fails the test (ASSERT) if it does not start.
  void StartCollector(const std::string& listen = "127.0.0.1:0");

  // Starts meridian-agent on socket_; returns once it serves.
  Child StartAgent(const std::vector<std::string>& flags = {});

  // Open MPI's mpirun running `program` on 4 ranks, killed after 60 s
  // with every rank's stack and state in its output.
  std::vector<std::string> Mpirun(std::vector<std::string> program);

  // `meridian run --job JOB -- COMMAND` against the collector.
  std::vector<std::string> MeridianRun(const std::string& job,
                                       std::vector<std::string> command);

  // Runs `command` under `meridian run --job JOB` with `env` and waits:
  // true if it exited 0, else a failure naming what it printed.
  bool Traced(const std::string& job, std::vector<std::string> command,
              const std::map<std::string, std::string>& env);
  // The same with env_.
  bool Traced(const std::string& job, std::vector<std::string> command);

  // Runs a compiler (or any tool) and waits: true if it exited 0.
  bool Built(const std::vector<std::string>& argv);

  // A check of a traced job: (store, collector address, environment, job).
  using JobCheck = void (*)(const std::string&, const std::string&,
                            const std::map<std::string, std::string>&,
                            const std::string&);
  // Starts a collector and an agent, traces `mpi_edges MODE` on 4 ranks as
  // job MODE, then runs `check` on it.
  void CheckEdges(const std::string& mode, JobCheck check);

  // SIGTERM to `agent`, which must exit 0.
  void StopAgent(Child& agent);

  // What `meridian-agent --status` says of the agent on socket_.
  std::string AgentStatus();

  // `meridian-agent --flush` of the agent on socket_ (60 s at most): its
  // exit code; it must say "state delivered".
  int Flush();

  std::string dir_, socket_, db_, address_;
  std::map<std::string, std::string> env_;
  std::optional<CollectorProcess> collector_;
};

// What every rank of mpi_known's known sequence recorded (tests/mpi_known.cc,
// under Open MPI or MPICH): `rows` without the accounting ones.
void ExpectKnownSequence(const std::vector<Row>& rows);

// What every rank of tests/mpi_known_fortran.F90 recorded.
void ExpectFortranSequence(const std::vector<Row>& rows);

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
                 std::map<std::string, size_t> counts);

// The point-to-point part both programs share, on `rank`: Comm_rank and
// Comm_size of the world, 3 persistent sends of 16 ints right and receives
// from the left (each start a span, issue to completion); even ranks send
// their partner 5 doubles with tags 11, 12, 13, which odd ranks Probe and
// Iprobe, Mprobe and Mrecv, Improbe and Imrecv; a Sendrecv of 3 ints each
// way with the right.
void ExpectSharedPointToPoint(const std::vector<Row>& rows, int rank);

// Two Pcontrol instants, levels 0 then 1; the resource use counters at
// MPI_Finalize and at exit, never decreasing.
void ExpectPcontrolAndResourceUse(const std::vector<Row>& rows, int rank);

// What every rank of tests/mpi_coverage.cc recorded (see its comments),
// under Open MPI or MPICH: `rows` with the accounting ones.
void ExpectCoverage(const std::vector<Row>& rows);

// What every rank of tests/mpi_persistent.cc recorded (see its comments):
// each start of a persistent collective is an instance of MPI_COMM_WORLD
// with the next sequence number, one started while recording was stopped
// included; with `partitioned` (MPICH), the partitioned calls too.
void ExpectPersistent(const std::vector<Row>& rows, bool partitioned);

}  // namespace mpi_capture
}  // namespace meridian

#endif  // MERIDIAN_TESTS_MPI_CAPTURE_FIXTURE_H_
