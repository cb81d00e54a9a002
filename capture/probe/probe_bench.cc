// The probe's cost, measured inside one traced MPI job so that traced and
// untraced calls see the same machine at the same moment: batches of
// MPI_X (through the probe's wrapper, recorded) alternate with batches of
// PMPI_X (the same MPI function without the wrapper, what an untraced
// program calls), and the medians are compared. Run by
// `./bench/run.sh probe` under `meridian run`.
//
//   probe_bench --event       1 rank: 8-byte MPI_Allreduce on MPI_COMM_SELF;
//                             prints the median extra ns per recorded call
//   probe_bench --allreduce   N ranks: 8-byte MPI_Allreduce on
//                             MPI_COMM_WORLD; prints the median batch times
//   probe_bench --allreduce --untraced-only
//                             only PMPI batches: for comparing separate runs
//   probe_bench --loop R      R rounds of 8-byte MPI_Allreduce on
//                             MPI_COMM_WORLD through MPI_Allreduce, as a
//                             program calls it (recorded if the probe is
//                             loaded); rank 0 prints `loop_ns=T`, the loop's
//                             time between barriers. For separate traced and
//                             untraced jobs (`./bench/run.sh colocated`)
#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

bool Has(int argc, char** argv, const char* flag) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], flag) == 0) return true;
  }
  return false;
}

// The integer after `flag`, or `otherwise`.
int IntFlag(int argc, char** argv, const char* flag, int otherwise) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (strcmp(argv[i], flag) == 0) return atoi(argv[i + 1]);
  }
  return otherwise;
}

// ns per call of `batch` 8-byte allreduces on `comm`, wrapped or raw.
double Batch(MPI_Comm comm, int batch, bool wrapped) {
  double value = 1.0, sum;
  const double start = Now();
  for (int i = 0; i < batch; ++i) {
    if (wrapped) {
      MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
    } else {
      PMPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
    }
  }
  return (Now() - start) / batch;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int loop = IntFlag(argc, argv, "--loop", 0);
  if (loop > 0) {
    Batch(MPI_COMM_WORLD, 2000, false);  // warm up
    PMPI_Barrier(MPI_COMM_WORLD);
    const double start = Now();
    Batch(MPI_COMM_WORLD, loop, true);
    PMPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("loop_ns=%.0f\n", Now() - start);
    MPI_Finalize();
    return 0;
  }
  const bool event = Has(argc, argv, "--event");
  const bool untraced_only = Has(argc, argv, "--untraced-only");
  MPI_Comm comm = event ? MPI_COMM_SELF : MPI_COMM_WORLD;
  const int batch = event ? 10000 : 2000;
  const int rounds = IntFlag(argc, argv, "--rounds", event ? 101 : 41);
  Batch(comm, batch, false);  // warm up
  if (!untraced_only) Batch(comm, batch, true);
  std::vector<double> traced, untraced, extra, ratio;
  for (int r = 0; r < rounds; ++r) {
    // Every rank runs the same kind of batch at the same time; the order
    // alternates so that a drift of the machine favours neither.
    double raw = 0, wrapped = 0;
    for (int half = 0; half < 2; ++half) {
      const bool traced_now = !untraced_only && (half == r % 2);
      if (untraced_only && half == 1) break;
      PMPI_Barrier(MPI_COMM_WORLD);
      (traced_now ? wrapped : raw) = Batch(comm, batch, traced_now);
    }
    untraced.push_back(raw);
    if (untraced_only) continue;
    traced.push_back(wrapped);
    extra.push_back(wrapped - raw);
    ratio.push_back(wrapped / raw);
  }
  if (rank == 0) {
    if (untraced_only) {
      printf("{\"untraced_ns\": %.1f}\n", Median(untraced));
    } else {
      printf(
          "{\"ranks\": %d, \"calls\": %d, \"untraced_ns\": %.1f, "
          "\"traced_ns\": %.1f, \"extra_ns\": %.1f, \"ratio\": %.4f}\n",
          size, batch * rounds, Median(untraced), Median(traced), Median(extra),
          Median(ratio));
    }
  }
  MPI_Finalize();
  return 0;
}
