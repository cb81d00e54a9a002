// The MPI half of tests/mpi_local_job.cc: a library linked against libmpi,
// as a Python extension is (mpi4py, Horovod). run_mpi makes 3 MPI_Allreduce
// of one double on MPI_COMM_WORLD between MPI_Init and MPI_Finalize and
// returns their result.
#include <mpi.h>

extern "C" __attribute__((visibility("default"))) double run_mpi() {
  MPI_Init(nullptr, nullptr);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double value = rank;
  for (int i = 0; i < 3; ++i) {
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return value;
}
