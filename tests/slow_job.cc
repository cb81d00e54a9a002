// A job that gets slower, for fail-slow detection (tests/health_test.sh):
//   slow_job STEPS SLOW_RANK FROM_STEP FACTOR COMPUTE_MS
// Each step (meridian_step_begin/end): every rank computes (sleeps)
// COMPUTE_MS, rank SLOW_RANK FACTOR times as long from step FROM_STEP on
// (-1: no rank), then an MPI_Allreduce of 64 KiB. Rank 0 prints "step N"
// as it begins step FROM_STEP, and "done" after the last.
#include <mpi.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define MERIDIAN_PROBE_OPTIONAL
#include "meridian/probe.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 6) {
    fprintf(stderr,
            "usage: slow_job STEPS SLOW_RANK FROM_STEP FACTOR COMPUTE_MS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long steps = atol(argv[1]), slow_rank = atol(argv[2]),
             from = atol(argv[3]);
  const double factor = atof(argv[4]), compute_ms = atof(argv[5]);
  std::vector<double> in(8192, 1.0), out(8192);  // 64 KiB
  for (long step = 0; step < steps; ++step) {
    if (rank == 0 && step == from) {
      printf("step %ld\n", step);
      fflush(stdout);
    }
    MERIDIAN_CALL(meridian_step_begin, step);
    const double ms =
        compute_ms * (rank == slow_rank && step >= from ? factor : 1.0);
    const long ns = static_cast<long>(ms * 1e6);
    const timespec t = {ns / 1000000000, ns % 1000000000};
    nanosleep(&t, nullptr);
    MPI_Allreduce(in.data(), out.data(), 8192, MPI_DOUBLE, MPI_SUM,
                  MPI_COMM_WORLD);
    MERIDIAN_CALL(meridian_step_end);
  }
  if (rank == 0) printf("done\n");
  MPI_Finalize();
  return 0;
}
