// The MPI program of tests/mpi_capture_calls_test.cc and
// tests/mpi_capture_agents_test.cc: a fixed sequence of calls whose records
// the tests know exactly (run on 4 ranks).
//
//   mpi_known                          the known sequence (see the test)
//   mpi_known --late-rank R --late-ms M
//       the known sequence, rank R sleeping M ms in "forward" before the
//       first MPI_Allreduce: a straggler whose lateness is known
//   mpi_known --kill-rank R --instants N
//       rank R records N instants "before-kill" and SIGKILLs itself
//   mpi_known --pause DIR --instants N
//       every rank records N instants "phase-a"; rank 0 then writes a line
//       to the FIFO DIR/ready and reads one from DIR/go (the test restarts
//       the agent in between); then N instants "phase-b"
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define MERIDIAN_PROBE_OPTIONAL  // runs untraced too
#include "meridian/probe.h"

namespace {

const char* Flag(int argc, char** argv, const char* name) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (strcmp(argv[i], name) == 0) return argv[i + 1];
  }
  return nullptr;
}

void Instants(const char* name, int n) {
  for (int i = 0; i < n; ++i) MERIDIAN_CALL(meridian_instant, name);
}

void KnownSequence(int rank, int late_rank, int late_ms) {
  const int right = (rank + 1) % 4;
  const int across = (rank + 2) % 4;
  int ints[10] = {};
  MPI_Status status;
  if (rank % 2 == 0) {  // a ring without deadlock
    MPI_Send(ints, 10, MPI_INT, right, 7, MPI_COMM_WORLD);
    MPI_Recv(ints, 10, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &status);
  } else {
    MPI_Recv(ints, 10, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    MPI_Send(ints, 10, MPI_INT, right, 7, MPI_COMM_WORLD);
  }

  double out[3] = {}, in[3];
  MPI_Request requests[2];
  MPI_Isend(out, 3, MPI_DOUBLE, across, 9, MPI_COMM_WORLD, &requests[0]);
  MPI_Irecv(in, 3, MPI_DOUBLE, across, 9, MPI_COMM_WORLD, &requests[1]);
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);

  MERIDIAN_CALL(meridian_step_begin, 0);
  MERIDIAN_CALL(meridian_phase_begin, "forward");
  if (rank == late_rank) usleep(late_ms * 1000);
  double value = rank;
  for (int i = 0; i < 5; ++i) {
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  MERIDIAN_CALL(meridian_phase_end);
  MERIDIAN_CALL(meridian_instant, "checkpoint");
  MERIDIAN_CALL(meridian_counter, "loss", 0.25 * rank);
  MERIDIAN_CALL(meridian_step_end);

  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  int one = 1;
  MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_INT, MPI_SUM, half);
  MPI_Bcast(&one, 1, MPI_INT, 0, half);

  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Barrier(dup);

  int sendcounts[4] = {1, 2, 3, 4}, sdispls[4] = {0, 1, 3, 6};
  int recvcounts[4], rdispls[4];
  for (int i = 0; i < 4; ++i) {
    recvcounts[i] = rank + 1;
    rdispls[i] = i * (rank + 1);
  }
  std::vector<int> sendbuf(10), recvbuf(16);
  MPI_Alltoallv(sendbuf.data(), sendcounts, sdispls, MPI_INT, recvbuf.data(),
                recvcounts, rdispls, MPI_INT, MPI_COMM_WORLD);

  int gathercounts[4] = {1, 2, 3, 4}, gatherdispls[4] = {0, 1, 3, 6};
  MPI_Gatherv(sendbuf.data(), rank + 1, MPI_INT, recvbuf.data(), gathercounts,
              gatherdispls, MPI_INT, 0, MPI_COMM_WORLD);

  float pair[2] = {1, 2};
  MPI_Request request;
  MPI_Iallreduce(MPI_IN_PLACE, pair, 2, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                 &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);

  // Derived datatypes: the second is often made at the first's freed
  // handle, and must not be recorded with the first's size.
  for (int n = 2; n <= 3; ++n) {
    MPI_Datatype block;
    MPI_Type_contiguous(n, MPI_INT, &block);
    MPI_Type_commit(&block);
    std::vector<int> all(4 * n);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all.data(), 1, block,
                  MPI_COMM_WORLD);
    MPI_Type_free(&block);
  }

  MPI_Comm_free(&dup);
  MPI_Comm_free(&half);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* instants = Flag(argc, argv, "--instants");
  const int n = instants ? atoi(instants) : 0;
  if (const char* kill_rank = Flag(argc, argv, "--kill-rank")) {
    if (rank == atoi(kill_rank)) {
      Instants("before-kill", n);
      raise(SIGKILL);
    }
    MPI_Barrier(MPI_COMM_WORLD);  // never completes: mpirun ends the job
  } else if (const char* dir = Flag(argc, argv, "--pause")) {
    Instants("phase-a", n);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
      // Blocking FIFO opens: the test is the other end.
      int ready = open((std::string(dir) + "/ready").c_str(), O_WRONLY);
      (void)!write(ready, "ready\n", 6);
      close(ready);
      int go = open((std::string(dir) + "/go").c_str(), O_RDONLY);
      char line[16];
      (void)!read(go, line, sizeof(line));
      close(go);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    Instants("phase-b", n);
  } else {
    const char* late_rank = Flag(argc, argv, "--late-rank");
    const char* late_ms = Flag(argc, argv, "--late-ms");
    KnownSequence(rank, late_rank ? atoi(late_rank) : -1,
                  late_ms ? atoi(late_ms) : 0);
  }
  MPI_Finalize();
  return 0;
}
