// A job whose waits are known, for `meridian waits` (tests/waits_test.sh):
//   waits_job STEPS
// Four ranks; each step (meridian_step_begin/end), on time t from its
// start, every "compute" a phase of its own (a sleep):
//   late_sender      rank 1 computes 20 ms, then MPI_Send to rank 0, which
//                    called MPI_Recv at 0: rank 0 waits 20 ms;
//   late_receiver    rank 2 MPI_Ssend to rank 3 at 0; rank 3 computes 15 ms
//                    before its MPI_Recv: rank 2 waits 15 ms; then ranks 2
//                    and 3 compute 5 ms (all at 20 ms);
//   wait_at_nxn      rank 2 computes 10 ms before MPI_Allreduce: ranks 0,
//                    1, 3 wait 10 ms (all at 30 ms);
//   late_broadcast   the root, rank 1, computes 10 ms before MPI_Bcast:
//                    ranks 0, 2, 3 wait 10 ms (40 ms);
//   early_reduce     ranks 1 and 2 compute 10 ms and rank 3 11 ms before
//                    MPI_Reduce to rank 0, which waits 11 ms for rank 3
//                    (all at 51 ms: a non-root's reduce may wait for
//                    others in the library's tree, so all arrive first);
//   wait_at_barrier  rank 0 computes 10 ms before MPI_Barrier: ranks 1, 2,
//                    3 wait 10 ms (61 ms).
// Each rank prints what its labelled computes took, measured ("measured
// LABEL NS": the waits the job built in, as the machine ran them), and
// rank 0 "done" after the last step.
#include <mpi.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#define MERIDIAN_PROBE_OPTIONAL
#include "meridian/probe.h"

namespace {

int64_t Now() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

std::map<std::string, int64_t> measured;  // label: ns

// Computes (sleeps) `ms` in a phase "compute", adding what it took to
// `label`'s total if given.
void Compute(int ms, const char* label = nullptr) {
  const int64_t start = Now();
  MERIDIAN_CALL(meridian_phase_begin, "compute");
  const timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, nullptr);
  MERIDIAN_CALL(meridian_phase_end);
  if (label != nullptr) measured[label] += Now() - start;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2 || size != 4) {
    fprintf(stderr, "usage: mpirun -np 4 waits_job STEPS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const long steps = atol(argv[1]);
  double value = 1, sum = 0;
  for (long step = 0; step < steps; ++step) {
    MERIDIAN_CALL(meridian_step_begin, step);
    if (rank == 0) {
      MPI_Recv(&value, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      Compute(20, "late_sender");
      MPI_Send(&value, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
    } else if (rank == 2) {
      MPI_Ssend(&value, 1, MPI_DOUBLE, 3, 2, MPI_COMM_WORLD);
      Compute(5);
    } else {
      Compute(15, "late_receiver");
      MPI_Recv(&value, 1, MPI_DOUBLE, 2, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      Compute(5);
    }
    if (rank == 2) Compute(10, "wait_at_nxn");
    MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 1) Compute(10, "late_broadcast");
    MPI_Bcast(&value, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD);
    if (rank == 1 || rank == 2) Compute(10);
    if (rank == 3) Compute(11, "early_reduce");
    MPI_Reduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) Compute(10, "wait_at_barrier");
    MPI_Barrier(MPI_COMM_WORLD);
    MERIDIAN_CALL(meridian_step_end);
  }
  for (const auto& [label, ns] : measured) {
    printf("measured %s %lld\n", label.c_str(), static_cast<long long>(ns));
  }
  if (rank == 0) printf("done\n");
  MPI_Finalize();
  return 0;
}
