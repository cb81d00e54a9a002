// A job that hangs, for `meridian health` (tests/health_test.sh):
//   hang_job stuck      rank 2 stops in its own code before its 10th
//                       MPI_Allreduce; the others wait in it
//   hang_job mismatch   rank 2 calls MPI_Bcast where the others call their
//                       10th MPI_Allreduce
//   hang_job deadlock   ranks 0 and 1 each send 16 MiB to the other, no
//                       receive posted: rank 0 blocks in MPI_Send, rank 1
//                       in MPI_Wait for its MPI_Isend
//   hang_job compute FILE  every rank computes (sleeps) in a phase "solve"
//                       between two MPI_Allreduces until FILE exists
// Each prints "hanging" (rank 0: "computing") once it is about to, so that
// the test knows the job got that far; the hangs last until killed.
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define MERIDIAN_PROBE_OPTIONAL
#include "meridian/probe.h"

namespace {

// Where rank 2 is stuck: its own code, no MPI call.
__attribute__((noinline)) void StuckInOwnCode() {
  for (;;) pause();
}

void Said(int rank, const char* what) {
  if (rank == 0 || rank == 2) {
    printf("rank %d %s\n", rank, what);
    fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = argc > 1 ? argv[1] : "";
  double in = 1, out = 0;
  if (strcmp(mode, "stuck") == 0 || strcmp(mode, "mismatch") == 0) {
    for (int i = 0; i < 10; ++i) {
      if (i == 9 && rank == 2) {
        Said(rank, "hanging");
        if (mode[0] == 's') StuckInOwnCode();
        MPI_Bcast(&in, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      }
      if (i == 9) Said(rank, "hanging");
      MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
  } else if (strcmp(mode, "deadlock") == 0) {
    std::vector<char> buffer(16 << 20);
    Said(rank, "hanging");
    const int bytes = static_cast<int>(buffer.size());
    if (rank == 0) {
      MPI_Send(buffer.data(), bytes, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
    } else if (rank == 1) {
      MPI_Request request;
      MPI_Isend(buffer.data(), bytes, MPI_CHAR, 0, 7, MPI_COMM_WORLD, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    }
  } else if (strcmp(mode, "compute") == 0 && argc > 2) {
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MERIDIAN_CALL(meridian_phase_begin, "solve");
    Said(rank, "computing");
    while (access(argv[2], F_OK) != 0) usleep(100000);
    MERIDIAN_CALL(meridian_phase_end);
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  } else {
    fprintf(stderr, "usage: hang_job stuck|mismatch|deadlock|compute FILE\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return 0;
}
