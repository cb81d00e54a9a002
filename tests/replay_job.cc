// The MPI program of MpiCaptureTest's replay predictions: every rank runs
// STEPS steps of "compute" (COMPUTE_US of busy work, SLOW_US more on rank
// SLOW_RANK), "pack" (PACK_US) and an MPI_Allreduce of 64 KiB. Busy work
// spins on the wall clock, so a phase lasts its time however the machine
// schedules the ranks (a descheduled rank catches up, never less).
//
//   replay_job STEPS COMPUTE_US SLOW_RANK SLOW_US PACK_US
//
// A job with a slow rank and the same job without it, or with a longer
// "pack" and without, are what `meridian replay --rank-like` and `--scale`
// must predict one from the other.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cstdint>
#include <vector>

#define MERIDIAN_PROBE_OPTIONAL  // runs untraced too
#include "meridian/probe.h"

namespace {

int64_t NowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * int64_t{1000000000} + t.tv_nsec;
}

void Phase(const char* name, int64_t us) {
  MERIDIAN_CALL(meridian_phase_begin, name);
  const int64_t until = NowNs() + us * 1000;
  volatile uint64_t x = 1;
  while (NowNs() < until) {
    for (int i = 0; i < 100; ++i) x = x * 6364136223846793005ULL + 1;
  }
  MERIDIAN_CALL(meridian_phase_end);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 6) {
    fprintf(stderr,
            "usage: replay_job STEPS COMPUTE_US SLOW_RANK SLOW_US PACK_US\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int steps = atoi(argv[1]);
  const int64_t compute_us = atoll(argv[2]);
  const int slow_rank = atoi(argv[3]);
  const int64_t slow_us = atoll(argv[4]);
  const int64_t pack_us = atoll(argv[5]);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<double> in(8192, rank), out(8192);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int s = 0; s < steps; ++s) {
    MERIDIAN_CALL(meridian_step_begin, s);
    Phase("compute", compute_us + (rank == slow_rank ? slow_us : 0));
    Phase("pack", pack_us);
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()),
                  MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MERIDIAN_CALL(meridian_step_end);
  }
  MPI_Finalize();
  return 0;
}
