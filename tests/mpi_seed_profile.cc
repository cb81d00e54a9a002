// The calls behind the seed mpitrace profile (../shared/seeds, "Data for
// MPI rank 0 of 8": a distributed data-parallel run), made again on 8
// ranks with the same counts and sizes, so that `meridian stats
// --mpitrace` can be compared with what mpitrace printed:
//   MPI_Comm_rank 5, MPI_Comm_size 3, MPI_Bcast 64 (129.3 bytes on
//   average: 34 x 4, 17 x 25, 128, 8 x 211, 281, 569, 2 x 2525),
//   MPI_Barrier 1, MPI_Allreduce 8758 (40 x 4 and 8718 x 8 bytes),
//   MPI_Gather 29 (4 bytes), MPI_Gatherv 29 (0 bytes), MPI_Allgather 2
//   (4 bytes).
#include <mpi.h>

#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  for (int i = 0; i < 5; ++i) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < 3; ++i) MPI_Comm_size(MPI_COMM_WORLD, &size);
  const struct {
    int calls;
    int bytes;
  } bcasts[] = {{34, 4},  {17, 25}, {1, 128}, {8, 211},
                {1, 281}, {1, 569}, {2, 2525}};
  std::vector<char> buffer(4096);
  for (const auto& b : bcasts) {
    for (int i = 0; i < b.calls; ++i) {
      MPI_Bcast(buffer.data(), b.bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int one = 1, sum = 0;
  for (int i = 0; i < 40; ++i) {
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  double x = 1, total = 0;
  for (int i = 0; i < 8718; ++i) {
    MPI_Allreduce(&x, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  std::vector<int> gathered(size), zeros(size, 0), displs(size, 0);
  for (int i = 0; i < 29; ++i) {
    MPI_Gather(&rank, 1, MPI_INT, gathered.data(), 1, MPI_INT, 0,
               MPI_COMM_WORLD);
    MPI_Gatherv(&rank, 0, MPI_INT, gathered.data(), zeros.data(), displs.data(),
                MPI_INT, 0, MPI_COMM_WORLD);
  }
  for (int i = 0; i < 2; ++i) {
    MPI_Allgather(&rank, 1, MPI_INT, gathered.data(), 1, MPI_INT,
                  MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return total == size ? 0 : 1;
}
