// The MPI programs of MpiCaptureTest's critical-path jobs (4 ranks): one
// known rank computes a known extra amount (busy work: thread CPU time, not
// a sleep) before an MPI operation whose dependency edge then bounds the
// step, and another computes after it, so that the step ends on that rank.
// The critical path of the step must run through both computations and the
// edge between them.
//
//   mpi_edges neighbor
//       step 0 on a directed ring (MPI_Dist_graph_create_adjacent: rank r
//       receives from r-1 and sends to r+1): rank 2 computes 80 ms
//       ("compute"), everyone calls MPI_Neighbor_alltoall, rank 3 then
//       computes 80 ms ("post"). Rank 3 waited for its in-neighbor, rank 2.
//   mpi_edges sendrecv
//       step 0, a halo exchange on a ring: every rank calls MPI_Sendrecv,
//       sending to r+1 (tag 7) and receiving from r-1; rank 2 computes
//       80 ms before it, rank 3 (which receives, with MPI_ANY_SOURCE and
//       MPI_ANY_TAG, from rank 2) computes 80 ms after it. Rank 3 waited
//       for rank 2's send.
//   mpi_edges rma
//       a window of 4 ints per rank. Step 0, a fence epoch: rank 1 computes
//       80 ms, everyone puts one int to its right and calls MPI_Win_fence
//       (MPI_MODE_NOSUCCEED: it ends the epoch), rank 3 then computes 80 ms.
//       Step 1, exclusive lock epochs on rank 1's memory: rank 0 locks it,
//       gets an int and flushes (so it holds the lock) and tells rank 2
//       (MPI_Send); rank 2 answers (MPI_Isend) and locks it (its epoch must
//       wait for rank 0's); rank 0, answered, computes 80 ms and unlocks;
//       rank 2 completes its answer (MPI_Wait), puts an int, unlocks and
//       computes 80 ms.
//   mpi_edges locks
//       the same window; shared against exclusive lock epochs on rank 1's
//       memory, arranged as step 1 of rma. Step 0: rank 3 takes a shared
//       lock, gets an int and unlocks, then tells rank 0; rank 0, told,
//       holds a shared lock (get, flush) and tells rank 2; rank 2 answers
//       and asks for an exclusive lock (it must wait for rank 0's shared
//       epoch); rank 0 computes 80 ms and unlocks; rank 2 completes its
//       answer, puts an int, unlocks and computes 80 ms. Step 1: rank 0
//       holds an exclusive lock (get, flush) and tells rank 2, which
//       answers and calls MPI_Win_lock_all (a shared lock on every target:
//       it must wait for rank 0's); rank 0 computes 80 ms and unlocks; rank
//       2 completes its answer, gets an int, calls MPI_Win_unlock_all and
//       computes 80 ms.
//   mpi_edges pscw
//       the same window, generalized active target: rank 3 exposes its
//       memory to ranks 0 to 2 (MPI_Win_post, then MPI_Win_wait) and each
//       of them accesses it (MPI_Win_start, MPI_Put of its rank, then
//       MPI_Win_complete). Step 0: rank 1 computes 80 ms before its
//       MPI_Win_complete, rank 3 computes 80 ms after its MPI_Win_wait,
//       which returns only once all three completed. Step 1: rank 3
//       computes 80 ms before its MPI_Win_post, rank 0 computes 80 ms
//       after its MPI_Win_complete (Open MPI and MPICH hold rank 0 in
//       MPI_Win_start until the post came).
//
// Every other rank is in place before the late rank begins: it tells the
// late rank with an MPI_Isend, which returns at once, and goes straight on
// to the operation (completing the send after the step). On a loaded
// machine a rank waiting inside MPI can wait long for the CPU; one that
// returned from MPI is running, and reaches the operation at once. The
// computations are long against the rest, so the step ends on the rank
// that computes last.
//
// Exits non-zero if MPI returns a wrong result.
#include <mpi.h>
#include <time.h>

#include <cstdio>
#include <cstring>

#define MERIDIAN_PROBE_OPTIONAL  // runs untraced too
#include "meridian/probe.h"

namespace {

int g_rank = 0;
int g_token = 0;                // what the in-place messages carry
constexpr int kComputeMs = 80;  // the late rank's, before the operation
constexpr int kPostMs = 80;     // the waiting rank's, after it

void Check(bool ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "rank %d: %s\n", g_rank, what);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int64_t ThreadCpuNs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * int64_t{1000000000} + t.tv_nsec;
}

// `ms` of this thread's CPU time: on a machine with fewer cores than ranks
// it takes longer, never less.
void Busy(int ms) {
  const int64_t until = ThreadCpuNs() + ms * int64_t{1000000};
  volatile uint64_t x = 1;
  while (ThreadCpuNs() < until) {
    for (int i = 0; i < 1000; ++i) x = x * 6364136223846793005ULL + 1;
  }
}

void BeginStep(int64_t step) { MERIDIAN_CALL(meridian_step_begin, step); }

void EndStep() { MERIDIAN_CALL(meridian_step_end); }

// `ms` in a phase named `name`.
void Compute(const char* name, int ms) {
  MERIDIAN_CALL(meridian_phase_begin, name);
  Busy(ms);
  MERIDIAN_CALL(meridian_phase_end);
}

// Returns on `late` once every other rank has called it; on the others at
// once, with the send that told `late` (to complete after the step).
MPI_Request InPlace(int late) {
  MPI_Request told = MPI_REQUEST_NULL;
  if (g_rank != late) {
    MPI_Isend(&g_token, 1, MPI_INT, late, 1, MPI_COMM_WORLD, &told);
    return told;
  }
  for (int rank = 0; rank < 4; ++rank) {
    int token = 0;
    if (rank != late) {
      MPI_Recv(&token, 1, MPI_INT, rank, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  return told;
}

void Neighbor(int right, int left) {
  MPI_Comm ring;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1,
                                 &right, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                 &ring);
  MPI_Request told = InPlace(2);
  BeginStep(0);
  if (g_rank == 2) Compute("compute", kComputeMs);
  int out = g_rank, in = -1;
  MPI_Neighbor_alltoall(&out, 1, MPI_INT, &in, 1, MPI_INT, ring);
  if (g_rank == 3) Compute("post", kPostMs);
  EndStep();
  MPI_Wait(&told, MPI_STATUS_IGNORE);
  Check(in == left, "neighbor_alltoall");
  MPI_Comm_free(&ring);
}

void Sendrecv(int right, int left) {
  MPI_Request told = InPlace(2);
  BeginStep(0);
  if (g_rank == 2) Compute("compute", kComputeMs);
  int out = g_rank, in = -1;
  MPI_Status status;
  MPI_Sendrecv(&out, 1, MPI_INT, right, 7, &in, 1, MPI_INT,
               g_rank == 3 ? MPI_ANY_SOURCE : left,
               g_rank == 3 ? MPI_ANY_TAG : 7, MPI_COMM_WORLD, &status);
  if (g_rank == 3) Compute("post", kPostMs);
  EndStep();
  MPI_Wait(&told, MPI_STATUS_IGNORE);
  Check(in == left && status.MPI_SOURCE == left && status.MPI_TAG == 7,
        "sendrecv");
}

// Step 1's lock epochs (see the top).
void LockEpochs(MPI_Win win) {
  int token = 0, got = -1;
  if (g_rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Get(&got, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_flush(1, win);
    MPI_Send(&token, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
    MPI_Recv(&token, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    Compute("compute", kComputeMs);
    MPI_Win_unlock(1, win);
    Check(got == 0, "lock get");
  } else if (g_rank == 2) {
    MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Request answer;
    MPI_Isend(&g_token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &answer);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Wait(&answer, MPI_STATUS_IGNORE);
    MPI_Put(&g_rank, 1, MPI_INT, 1, 1, 1, MPI_INT, win);
    MPI_Win_unlock(1, win);
    Compute("post", kPostMs);
  }
}

// The lock steps' handshakes: a word to `to`, and one from `from`.
void Tell(int to) { MPI_Send(&g_token, 1, MPI_INT, to, 0, MPI_COMM_WORLD); }
void Hear(int from) {
  int token = 0;
  MPI_Recv(&token, 1, MPI_INT, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

// Step 0 of locks: rank 2's exclusive epoch after rank 3's and rank 0's
// shared ones (see the top).
void SharedEpochs(MPI_Win win) {
  int got = -1;
  if (g_rank == 3) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    MPI_Get(&got, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_unlock(1, win);
    Tell(0);
    Check(got == -1, "shared get");
  } else if (g_rank == 0) {
    Hear(3);
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    MPI_Get(&got, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_flush(1, win);
    Tell(2);
    Hear(2);
    Compute("compute", kComputeMs);
    MPI_Win_unlock(1, win);
    Check(got == -1, "shared get");
  } else if (g_rank == 2) {
    Hear(0);
    MPI_Request answer;
    MPI_Isend(&g_token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &answer);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Wait(&answer, MPI_STATUS_IGNORE);
    MPI_Put(&g_rank, 1, MPI_INT, 1, 1, 1, MPI_INT, win);
    MPI_Win_unlock(1, win);
    Compute("post", kPostMs);
  }
}

// Step 1 of locks: rank 2's MPI_Win_lock_all after rank 0's exclusive
// epoch on rank 1 (see the top).
void LockAll(MPI_Win win) {
  int got = -1;
  if (g_rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Get(&got, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_flush(1, win);
    Tell(2);
    Hear(2);
    Compute("compute", kComputeMs);
    MPI_Win_unlock(1, win);
  } else if (g_rank == 2) {
    Hear(0);
    MPI_Request answer;
    MPI_Isend(&g_token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &answer);
    MPI_Win_lock_all(0, win);
    MPI_Wait(&answer, MPI_STATUS_IGNORE);
    MPI_Get(&got, 1, MPI_INT, 1, 1, 1, MPI_INT, win);
    MPI_Win_unlock_all(win);
    Compute("post", kPostMs);
    Check(got == 2, "lock_all get");
  }
}

void Locks() {
  int* base = nullptr;
  MPI_Win win;
  MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  for (int i = 0; i < 4; ++i) base[i] = -1;
  MPI_Barrier(MPI_COMM_WORLD);
  BeginStep(0);
  SharedEpochs(win);
  EndStep();
  MPI_Barrier(MPI_COMM_WORLD);
  BeginStep(1);
  LockAll(win);
  EndStep();
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
}

// One exposure of rank 3's memory to ranks 0 to 2 (`group`: the other
// side). `late` computes before its MPI_Win_post (rank 3) or its
// MPI_Win_complete (an origin), `waiting` after its last call.
void ExposeAndAccess(MPI_Win win, MPI_Group group, int late, int waiting) {
  const int target = 3;
  if (g_rank == target) {
    if (late == target) Compute("compute", kComputeMs);
    MPI_Win_post(group, 0, win);
    MPI_Win_wait(win);
  } else {
    MPI_Win_start(group, 0, win);
    MPI_Put(&g_rank, 1, MPI_INT, target, g_rank, 1, MPI_INT, win);
    if (g_rank == late) Compute("compute", kComputeMs);
    MPI_Win_complete(win);
  }
  if (g_rank == waiting) Compute("post", kPostMs);
}

// Rank 3 exposes, ranks 0 to 2 access (see the top).
void Pscw() {
  int* base = nullptr;
  MPI_Win win;
  MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  for (int i = 0; i < 4; ++i) base[i] = -1;
  MPI_Group world, group;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  const int origins[3] = {0, 1, 2}, target = 3;
  if (g_rank == target) {
    MPI_Group_incl(world, 3, origins, &group);
  } else {
    MPI_Group_incl(world, 1, &target, &group);
  }
  for (int step = 0; step < 2; ++step) {
    // Step 0: rank 1 completes late, rank 3 waits. Step 1: rank 3 posts
    // late, rank 0 waits.
    const int late = step == 0 ? 1 : target, waiting = step == 0 ? target : 0;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request told = InPlace(late);
    BeginStep(step);
    ExposeAndAccess(win, group, late, waiting);
    EndStep();
    MPI_Wait(&told, MPI_STATUS_IGNORE);
    if (g_rank == target) {
      Check(base[0] == 0 && base[1] == 1 && base[2] == 2, "pscw put");
      base[0] = base[1] = base[2] = -1;
    }
  }
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
}

void Rma(int right) {
  int* base = nullptr;
  MPI_Win win;
  MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &base, &win);
  for (int i = 0; i < 4; ++i) base[i] = -1;
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  MPI_Request told = InPlace(1);
  BeginStep(0);
  if (g_rank == 1) Compute("compute", kComputeMs);
  MPI_Put(&g_rank, 1, MPI_INT, right, 0, 1, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  if (g_rank == 3) Compute("post", kPostMs);
  EndStep();
  MPI_Wait(&told, MPI_STATUS_IGNORE);
  Check(base[0] == (g_rank + 3) % 4, "fence put");

  MPI_Barrier(MPI_COMM_WORLD);
  BeginStep(1);
  LockEpochs(win);
  EndStep();
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 1) Check(base[1] == 2, "lock put");
  MPI_Win_free(&win);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Check(size == 4, "4 ranks");
  const int right = (g_rank + 1) % 4, left = (g_rank + 3) % 4;
  if (argc == 2 && strcmp(argv[1], "neighbor") == 0) {
    Neighbor(right, left);
  } else if (argc == 2 && strcmp(argv[1], "sendrecv") == 0) {
    Sendrecv(right, left);
  } else if (argc == 2 && strcmp(argv[1], "rma") == 0) {
    Rma(right);
  } else if (argc == 2 && strcmp(argv[1], "locks") == 0) {
    Locks();
  } else if (argc == 2 && strcmp(argv[1], "pscw") == 0) {
    Pscw();
  } else {
    fprintf(stderr, "usage: mpi_edges neighbor|sendrecv|rma|locks|pscw\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return 0;
}
