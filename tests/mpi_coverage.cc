// The MPI program of MpiCaptureTest.EveryNewCallIsRecordedExactly: each call
// of the probe's wider coverage (persistent requests, probes, Alltoallw,
// neighbor collectives, one-sided communication, MPI-IO, MPI_Pcontrol,
// Comm_rank/Comm_size) a known number of times with known sizes, on 4 ranks
// of a ring: rank r's right is r+1, its left r-1, its partner r^1.
//
//   mpi_coverage FILE     FILE: a path for the MPI-IO calls (created)
//
// Exits non-zero if MPI returns a wrong result, so that a probe passing
// arguments wrongly fails the job, not only the test's counts.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>

namespace {

int g_rank = 0;

void Check(bool ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "rank %d: %s\n", g_rank, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

// 3 persistent sends of 16 ints right and receives from the left: two
// rounds of Startall, one of two Starts.
void Persistent(int right, int left) {
  int out[16], in[16];
  for (int i = 0; i < 16; ++i) out[i] = g_rank * 100 + i;
  MPI_Request requests[2];
  MPI_Send_init(out, 16, MPI_INT, right, 3, MPI_COMM_WORLD, &requests[0]);
  MPI_Recv_init(in, 16, MPI_INT, left, 3, MPI_COMM_WORLD, &requests[1]);
  for (int round = 0; round < 2; ++round) {
    MPI_Startall(2, requests);
    MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  }
  MPI_Start(&requests[0]);
  MPI_Start(&requests[1]);
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE);
  Check(in[5] == left * 100 + 5, "persistent receive");
  MPI_Request_free(&requests[0]);
  MPI_Request_free(&requests[1]);
}

// Even ranks send 5 doubles to their partner three times (tags 11, 12,
// 13); odd ranks Probe and Iprobe the first, Mprobe and Mrecv the second,
// Improbe (until found) and Imrecv the third.
void Probes() {
  const int partner = g_rank ^ 1;
  double values[5] = {1, 2, 3, 4, 5};
  if (g_rank % 2 == 0) {
    for (int tag = 11; tag <= 13; ++tag) {
      MPI_Send(values, 5, MPI_DOUBLE, partner, tag, MPI_COMM_WORLD);
    }
    return;
  }
  MPI_Status status;
  MPI_Probe(MPI_ANY_SOURCE, 11, MPI_COMM_WORLD, &status);
  Check(status.MPI_SOURCE == partner, "probe source");
  int flag = 0;
  MPI_Iprobe(partner, 11, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  Check(flag != 0, "iprobe of a probed message");
  MPI_Recv(values, 5, MPI_DOUBLE, partner, 11, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  MPI_Message message;
  MPI_Mprobe(MPI_ANY_SOURCE, 12, MPI_COMM_WORLD, &message, MPI_STATUS_IGNORE);
  MPI_Mrecv(values, 5, MPI_DOUBLE, &message, &status);
  Check(status.MPI_SOURCE == partner && values[4] == 5, "mrecv");
  flag = 0;
  while (!flag) {
    MPI_Improbe(MPI_ANY_SOURCE, 13, MPI_COMM_WORLD, &flag, &message,
                MPI_STATUS_IGNORE);
  }
  MPI_Request request;
  MPI_Imrecv(values, 5, MPI_DOUBLE, &message, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

// Alltoallw and Ialltoallw: i+1 ints to rank i (40 bytes in all), so
// rank+1 ints from each rank.
void Alltoallw() {
  int counts[4], displs[4], rcounts[4], rdispls[4];
  MPI_Datatype types[4];
  for (int i = 0; i < 4; ++i) {
    counts[i] = i + 1;
    displs[i] = static_cast<int>(sizeof(int)) * i * (i + 1) / 2;  // bytes
    rcounts[i] = g_rank + 1;
    rdispls[i] = static_cast<int>(sizeof(int)) * i * (g_rank + 1);
    types[i] = MPI_INT;
  }
  int out[10], in[16];
  for (int i = 0; i < 10; ++i) out[i] = g_rank;
  MPI_Alltoallw(out, counts, displs, types, in, rcounts, rdispls, types,
                MPI_COMM_WORLD);
  Check(in[3 * (g_rank + 1)] == 3, "alltoallw");
  MPI_Request request;
  MPI_Ialltoallw(out, counts, displs, types, in, rcounts, rdispls, types,
                 MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

// A periodic 1-D cartesian ring (neighbors left and right) and the same
// ring as a distributed graph, as Bluefog builds its topologies.
void Neighbors(int right, int left) {
  int dims[1] = {4}, periods[1] = {1};
  MPI_Comm ring;
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
  int two[2] = {g_rank, g_rank}, four[4] = {};
  MPI_Neighbor_allgather(two, 2, MPI_INT, four, 2, MPI_INT, ring);
  Check(four[0] == left && four[2] == right, "neighbor_allgather");
  int counts[2] = {2, 2}, displs[2] = {0, 2};
  MPI_Neighbor_allgatherv(two, 2, MPI_INT, four, counts, displs, MPI_INT, ring);
  int one[2] = {g_rank, g_rank};
  MPI_Neighbor_alltoall(one, 1, MPI_INT, four, 1, MPI_INT, ring);
  int vcounts[2] = {1, 2}, vdispls[2] = {0, 1},
      three[3] = {g_rank, g_rank, g_rank};
  int rcounts[2] = {2, 1}, rdispls[2] = {0, 2};
  MPI_Neighbor_alltoallv(three, vcounts, vdispls, MPI_INT, four, rcounts,
                         rdispls, MPI_INT, ring);
  MPI_Aint wsdispls[2] = {0, sizeof(int)};
  MPI_Aint wrdispls[2] = {0, 2 * sizeof(int)};
  MPI_Datatype types[2] = {MPI_INT, MPI_INT};
  MPI_Neighbor_alltoallw(three, vcounts, wsdispls, types, four, rcounts,
                         wrdispls, types, ring);
  MPI_Request request;
  MPI_Ineighbor_allgather(two, 2, MPI_INT, four, 2, MPI_INT, ring, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Comm_free(&ring);

  const int sources[2] = {left, right}, destinations[2] = {left, right};
  MPI_Comm graph;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, sources, MPI_UNWEIGHTED, 2,
                                 destinations, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &graph);
  MPI_Neighbor_allgather(two, 2, MPI_INT, four, 2, MPI_INT, graph);
  Check(four[0] == left && four[2] == right, "graph neighbor_allgather");
  MPI_Comm_free(&graph);
}

// A window of 8 ints per rank: fence epochs, a lock epoch, a lock_all
// epoch with atomics and request-based calls, and a post/start epoch.
void OneSided(int right, int left) {
  int* base = nullptr;
  MPI_Win win;
  MPI_Win_allocate(8 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  for (int i = 0; i < 8; ++i) base[i] = g_rank;
  int values[3] = {g_rank, g_rank, g_rank}, got[2] = {};
  MPI_Win_fence(0, win);
  MPI_Put(values, 1, MPI_INT, right, 0, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  MPI_Get(got, 2, MPI_INT, left, 1, 2, MPI_INT, win);
  MPI_Win_fence(0, win);
  Check(base[0] == left && got[0] == left, "fence put and get");
  MPI_Accumulate(values, 3, MPI_INT, right, 4, 3, MPI_INT, MPI_SUM, win);
  MPI_Win_fence(0, win);

  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
  MPI_Put(values, 1, MPI_INT, right, 7, 1, MPI_INT, win);
  MPI_Win_unlock(right, win);

  MPI_Win_lock_all(0, win);
  int one = 1, old = 0, compare = -1;
  MPI_Fetch_and_op(&one, &old, MPI_INT, left, 3, MPI_SUM, win);
  MPI_Compare_and_swap(&one, &compare, &old, MPI_INT, left, 3, win);
  MPI_Win_flush(left, win);
  int before = 0, fetched = -1;
  MPI_Get_accumulate(&one, 1, MPI_INT, &before, 1, MPI_INT, left, 1, 1, MPI_INT,
                     MPI_SUM, win);
  MPI_Request requests[4];
  MPI_Rput(values, 1, MPI_INT, right, 2, 1, MPI_INT, win, &requests[0]);
  MPI_Rget(got, 2, MPI_INT, left, 5, 2, MPI_INT, win, &requests[1]);
  MPI_Raccumulate(&one, 1, MPI_INT, right, 4, 1, MPI_INT, MPI_SUM, win,
                  &requests[2]);
  MPI_Rget_accumulate(&one, 1, MPI_INT, &fetched, 1, MPI_INT, right, 0, 1,
                      MPI_INT, MPI_NO_OP, win, &requests[3]);
  MPI_Waitall(4, requests, MPI_STATUSES_IGNORE);
  Check(fetched == g_rank, "rget_accumulate");
  MPI_Win_flush_all(win);
  MPI_Win_unlock_all(win);
  MPI_Barrier(MPI_COMM_WORLD);

  // Post/start: each rank exposes its window to its left neighbor and
  // accesses its right one.
  MPI_Group world, from_left, to_right;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &left, &from_left);
  MPI_Group_incl(world, 1, &right, &to_right);
  MPI_Win_post(from_left, 0, win);
  MPI_Win_start(to_right, 0, win);
  MPI_Put(values, 1, MPI_INT, right, 6, 1, MPI_INT, win);
  MPI_Win_complete(win);
  MPI_Win_wait(win);
  Check(base[6] == left, "post/start put");
  MPI_Group_free(&from_left);
  MPI_Group_free(&to_right);
  MPI_Group_free(&world);
  MPI_Win_free(&win);
}

// One shared file, each rank in its own 256-byte block.
void FileIo(const char* path) {
  MPI_File file;
  Check(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                      MPI_INFO_NULL, &file) == MPI_SUCCESS,
        "file_open");
  const MPI_Offset block = 256 * g_rank;
  int out[16], in[16];
  for (int i = 0; i < 16; ++i) out[i] = g_rank * 1000 + i;
  MPI_File_write_at(file, block, out, 16, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_read_at(file, block, in, 8, MPI_INT, MPI_STATUS_IGNORE);
  Check(in[7] == g_rank * 1000 + 7, "file_read_at");
  MPI_File_write_at_all(file, block + 64, out, 4, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_read_at_all(file, block + 64, in, 2, MPI_INT, MPI_STATUS_IGNORE);
  MPI_Request request;
  MPI_File_iwrite_at(file, block + 128, out, 16, MPI_INT, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_File_iread_at(file, block + 128, in, 16, MPI_INT, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  Check(in[15] == g_rank * 1000 + 15, "file_iread_at");
  MPI_File_close(&file);
}

// Last, so that the world's instances above keep their numbers: a
// Comm_split of the world into rank 0 and ranks 1-3, an intercommunicator
// between them, and an Alltoallv on it, whose counts arrays have the remote
// group's size: rank 0 sends ranks 1, 2, 3 one, two and three ints (24 B),
// rank r sends rank 0 r ints (4r B).
void Intercommunicator() {
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank == 0 ? 0 : 1, g_rank, &local);
  MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g_rank == 0 ? 1 : 0, 77,
                       &inter);
  int out[6] = {}, in[6] = {};
  int counts0[3] = {1, 2, 3}, displs0[3] = {0, 1, 3};
  int counts[1] = {g_rank}, displs[1] = {0};
  const bool root = g_rank == 0;
  for (int i = 0; i < 6; ++i) out[i] = g_rank;
  MPI_Alltoallv(out, root ? counts0 : counts, root ? displs0 : displs, MPI_INT,
                in, root ? counts0 : counts, root ? displs0 : displs, MPI_INT,
                inter);
  Check(root ? in[5] == 3 : in[0] == 0, "intercommunicator alltoallv");
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc != 2) {
    fprintf(stderr, "usage: mpi_coverage FILE\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int size = 0;
  for (int i = 0; i < 5; ++i) MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  for (int i = 0; i < 3; ++i) MPI_Comm_size(MPI_COMM_WORLD, &size);
  Check(size == 4, "4 ranks");
  const int right = (g_rank + 1) % 4, left = (g_rank + 3) % 4;

  Persistent(right, left);
  Probes();
  int out[3] = {g_rank, g_rank, g_rank}, in[3] = {};
  MPI_Sendrecv(out, 3, MPI_INT, right, 5, in, 3, MPI_INT, left, 5,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  Alltoallw();
  Neighbors(right, left);
  OneSided(right, left);
  FileIo(argv[1]);

  // Recording paused around one of three barriers: its instance is
  // counted (seq 1) but not recorded.
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Pcontrol(0);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Pcontrol(1);
  MPI_Barrier(MPI_COMM_WORLD);
  Intercommunicator();
  MPI_Finalize();
  return 0;
}
