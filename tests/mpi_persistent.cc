// MPI-4 persistent collectives, and under MPICH partitioned communication,
// made a known number of times with known sizes on 4 ranks
// (MpiCaptureTest.PersistentCollectivesAndPartitionedCallsAreRecorded
// checks what each rank recorded). Open MPI 4.1 has the persistent
// collectives as MPIX_* (mpi-ext.h), MPICH 4 under their MPI-4 names.
//
// On MPI_COMM_WORLD, in order (the sequence numbers the test expects):
//   seq 0-2  an Allreduce_init of 8 ints, started 3 times (MPI_Start)
//   seq 3    MPI_Barrier
//   seq 4-5  a Bcast_init of 16 doubles from rank 2, started twice
//            (MPI_Startall)
//   seq 6    the Allreduce again, started while MPI_Pcontrol(0) stops
//            recording: not recorded, but counted
//   seq 7    a Barrier_init, started once
// MPICH only: each rank sends 4 partitions of 2 ints to its right
// neighbor (Psend_init, tag 9) and receives them from its left (Precv_init);
// partitions 0 and 1 by MPI_Pready, 2 and 3 by one MPI_Pready_range.
#include <mpi.h>
#if defined(OPEN_MPI)
#include <mpi-ext.h>
#define MPI4(name) MPIX_##name
#else
#define MPI4(name) MPI_##name
#endif

#include <cstdio>

namespace {

int g_rank = 0;

void Check(bool ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "rank %d: %s\n", g_rank, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

void PersistentCollectives(int size) {
  int in[8], out[8];
  for (int i = 0; i < 8; ++i) in[i] = g_rank + i;
  MPI_Request allreduce;
  MPI4(Allreduce_init)
  (in, out, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &allreduce);
  for (int round = 0; round < 3; ++round) {
    MPI_Start(&allreduce);
    MPI_Wait(&allreduce, MPI_STATUS_IGNORE);
  }
  Check(out[1] == size * (size - 1) / 2 + size, "allreduce");
  MPI_Barrier(MPI_COMM_WORLD);

  double values[16];
  MPI_Request bcast[1];
  MPI4(Bcast_init)
  (values, 16, MPI_DOUBLE, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &bcast[0]);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 16; ++i) values[i] = g_rank == 2 ? round + i : -1;
    MPI_Startall(1, bcast);
    MPI_Waitall(1, bcast, MPI_STATUSES_IGNORE);
    Check(values[3] == round + 3, "bcast");
  }

  MPI_Pcontrol(0);
  MPI_Start(&allreduce);
  MPI_Wait(&allreduce, MPI_STATUS_IGNORE);
  MPI_Pcontrol(1);

  MPI_Request barrier;
  MPI4(Barrier_init)(MPI_COMM_WORLD, MPI_INFO_NULL, &barrier);
  MPI_Start(&barrier);
  MPI_Wait(&barrier, MPI_STATUS_IGNORE);

  MPI_Request_free(&allreduce);
  MPI_Request_free(&bcast[0]);
  MPI_Request_free(&barrier);
}

#if !defined(OPEN_MPI)
void Partitioned(int size) {
  const int right = (g_rank + 1) % size, left = (g_rank + size - 1) % size;
  int out[8], in[8];
  for (int i = 0; i < 8; ++i) out[i] = g_rank * 10 + i;
  MPI_Request send, recv;
  MPI_Psend_init(out, 4, 2, MPI_INT, right, 9, MPI_COMM_WORLD, MPI_INFO_NULL,
                 &send);
  MPI_Precv_init(in, 4, 2, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_INFO_NULL,
                 &recv);
  MPI_Start(&recv);
  MPI_Start(&send);
  MPI_Pready(0, send);
  MPI_Pready(1, send);
  MPI_Pready_range(2, 3, send);
  MPI_Wait(&send, MPI_STATUS_IGNORE);
  MPI_Wait(&recv, MPI_STATUS_IGNORE);
  Check(in[7] == left * 10 + 7, "partitioned receive");
  MPI_Request_free(&send);
  MPI_Request_free(&recv);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Check(size == 4, "4 ranks");
  PersistentCollectives(size);
#if !defined(OPEN_MPI)
  Partitioned(size);
#endif
  MPI_Finalize();
  return 0;
}
