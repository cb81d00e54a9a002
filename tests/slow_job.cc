// A job that gets slower, for fail-slow detection (tests/health_test.sh):
//   slow_job STEPS SLOW_RANK FROM_STEP FACTOR COMPUTE_MS [link]
// Each step (meridian_step_begin/end): every rank computes (sleeps)
// COMPUTE_MS, rank SLOW_RANK FACTOR times as long from step FROM_STEP on
// (-1: no rank), then an MPI_Allreduce of 64 KiB. Rank 0 prints "step N"
// as it begins step FROM_STEP, and "done" after the last.
// With "link": no rank computes longer and there is no Allreduce; instead
// each rank exchanges 1 MiB with its partner (rank ^ 1, MPI_Sendrecv),
// and from FROM_STEP on SLOW_RANK and its partner exchange it in FACTOR
// pieces: the same bytes at a lower rate, as over a slower link.
#include <mpi.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define MERIDIAN_PROBE_OPTIONAL
#include "meridian/probe.h"

// Exchanges `send` with `partner` into `receive` in `pieces` MPI_Sendrecv.
void Exchange(int partner, int pieces, std::vector<char>* send,
              std::vector<char>* receive) {
  const int piece = static_cast<int>(send->size()) / pieces;
  for (int i = 0; i < pieces; ++i) {
    MPI_Sendrecv(send->data() + i * piece, piece, MPI_CHAR, partner, 0,
                 receive->data() + i * piece, piece, MPI_CHAR, partner, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const bool link = argc == 7 && std::string(argv[6]) == "link";
  if (argc != 6 && !link) {
    fprintf(stderr,
            "usage: slow_job STEPS SLOW_RANK FROM_STEP FACTOR COMPUTE_MS "
            "[link]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const long steps = atol(argv[1]), slow_rank = atol(argv[2]),
             from = atol(argv[3]);
  const double factor = atof(argv[4]), compute_ms = atof(argv[5]);
  std::vector<double> in(8192, 1.0), out(8192);  // 64 KiB
  std::vector<char> send(1 << 20, 1), receive(1 << 20);
  for (long step = 0; step < steps; ++step) {
    if (rank == 0 && step == from) {
      printf("step %ld\n", step);
      fflush(stdout);
    }
    MERIDIAN_CALL(meridian_step_begin, step);
    const bool slow = step >= from &&
                      (rank == slow_rank || (link && (rank ^ 1) == slow_rank));
    const double ms = compute_ms * (slow && !link ? factor : 1.0);
    const long ns = static_cast<long>(ms * 1e6);
    const timespec t = {ns / 1000000000, ns % 1000000000};
    nanosleep(&t, nullptr);
    if (link) {
      Exchange(rank ^ 1, slow ? static_cast<int>(factor) : 1, &send, &receive);
    } else {
      MPI_Allreduce(in.data(), out.data(), 8192, MPI_DOUBLE, MPI_SUM,
                    MPI_COMM_WORLD);
    }
    MERIDIAN_CALL(meridian_step_end);
  }
  if (rank == 0) printf("done\n");
  MPI_Finalize();
  return 0;
}
