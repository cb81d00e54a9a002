// MPI_THREAD_MULTIPLE under the probe (tests/mpi_capture_recording_test.cc):
// 4 threads per rank make non-blocking calls and complete them concurrently,
// in a loop long enough for MPI to reuse request (and communicator) handles
// between one thread's completion and the probe's bookkeeping.
//
//   mpi_threads p2p N       threads 0 and 1 each issue MPI_Isend to rank
//                           r+1 and MPI_Irecv from rank r-1 and complete
//                           their own requests (MPI_Wait, MPI_Waitall or an
//                           MPI_Test loop, in turn; thread 1 frees every
//                           fifth send with MPI_Request_free instead);
//                           thread 2 issues the same
//                           and hands its requests to thread 3, which
//                           completes them (MPI_Wait or MPI_Waitsome).
//   mpi_threads wildcard N  each thread splits its own communicator with the
//                           ranks' order reversed every other iteration,
//                           posts MPI_Irecv from MPI_ANY_SOURCE, sends to
//                           rank r+1, frees the new communicator with both
//                           requests pending and only then waits.
//
// Iteration i of thread t uses tag t * 100000 + i and 1 + (7 * i + t) % 61
// ints; ranks are world ranks. Every record must name its own request's
// bytes, peer and tag. Prints "mpi_threads: rank R done" per rank.
#include <mpi.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 4;
int g_rank = 0;
int g_size = 0;
int g_iterations = 0;
MPI_Comm g_comms[kThreads];

int Tag(int thread, int i) { return thread * 100000 + i; }
int Count(int thread, int i) { return 1 + (7 * i + thread) % 61; }
int Next() { return (g_rank + 1) % g_size; }
int Previous() { return (g_rank + g_size - 1) % g_size; }

void Check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "mpi_threads: %s failed on rank %d\n", what, g_rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

// A message's buffers, alive until both requests complete.
struct Exchange {
  std::vector<int> out, in;
  MPI_Request requests[2];
};

void Issue(int thread, int i, Exchange* x) {
  const int count = Count(thread, i);
  x->out.assign(count, i);
  x->in.assign(count, -1);
  Check(MPI_Irecv(x->in.data(), count, MPI_INT, Previous(), Tag(thread, i),
                  g_comms[thread], &x->requests[0]),
        "MPI_Irecv");
  Check(MPI_Isend(x->out.data(), count, MPI_INT, Next(), Tag(thread, i),
                  g_comms[thread], &x->requests[1]),
        "MPI_Isend");
}

void Private(int thread) {
  Exchange x;
  for (int i = 0; i < g_iterations; ++i) {
    Issue(thread, i, &x);
    if (thread == 1 && i % 5 == 4) {
      // A send let go rather than waited for; the receive proves it
      // arrived before the buffer is reused.
      Check(MPI_Request_free(&x.requests[1]), "MPI_Request_free");
      Check(MPI_Wait(&x.requests[0], MPI_STATUS_IGNORE), "MPI_Wait");
      continue;
    }
    switch (i % 3) {
      case 0:
        Check(MPI_Waitall(2, x.requests, MPI_STATUSES_IGNORE), "MPI_Waitall");
        break;
      case 1:
        Check(MPI_Wait(&x.requests[1], MPI_STATUS_IGNORE), "MPI_Wait");
        Check(MPI_Wait(&x.requests[0], MPI_STATUS_IGNORE), "MPI_Wait");
        break;
      default:
        for (int r = 0; r < 2; ++r) {
          int done = 0;
          while (!done) {
            Check(MPI_Test(&x.requests[r], &done, MPI_STATUS_IGNORE),
                  "MPI_Test");
          }
        }
    }
  }
}

// Thread 2's requests, completed by thread 3.
std::mutex g_mutex;
std::condition_variable g_ready;
std::deque<Exchange*> g_handed;

// At most kHanded exchanges wait for thread 3 (a program's requests in
// flight are bounded; the probe's request table has room for thousands).
constexpr size_t kHanded = 64;
std::condition_variable g_room;

void Issuer(int thread) {
  for (int i = 0; i < g_iterations; ++i) {
    {
      std::unique_lock<std::mutex> lock(g_mutex);
      g_room.wait(lock, [] { return g_handed.size() < kHanded; });
    }
    auto* x = new Exchange;
    Issue(thread, i, x);
    std::lock_guard<std::mutex> lock(g_mutex);
    g_handed.push_back(x);
    g_ready.notify_one();
  }
}

void Completer() {
  for (int i = 0; i < g_iterations; ++i) {
    Exchange* x;
    {
      std::unique_lock<std::mutex> lock(g_mutex);
      g_ready.wait(lock, [] { return !g_handed.empty(); });
      x = g_handed.front();
      g_handed.pop_front();
      g_room.notify_one();
    }
    if (i % 2 == 0) {
      Check(MPI_Wait(&x->requests[0], MPI_STATUS_IGNORE), "MPI_Wait");
      Check(MPI_Wait(&x->requests[1], MPI_STATUS_IGNORE), "MPI_Wait");
    } else {
      int left = 2;
      while (left > 0) {
        int n = 0;
        int indices[2];
        Check(MPI_Waitsome(2, x->requests, &n, indices, MPI_STATUSES_IGNORE),
              "MPI_Waitsome");
        left -= n;
      }
    }
    delete x;
  }
}

void Wildcard(int thread) {
  std::vector<int> out, in;
  for (int i = 0; i < g_iterations; ++i) {
    const bool reversed = i % 2 == 1;
    MPI_Comm comm;
    Check(MPI_Comm_split(g_comms[thread], 0,
                         reversed ? g_size - 1 - g_rank : g_rank, &comm),
          "MPI_Comm_split");
    auto in_comm = [&](int world) {
      return reversed ? g_size - 1 - world : world;
    };
    const int count = Count(thread, i);
    out.assign(count, i);
    in.assign(count, -1);
    MPI_Request requests[2];
    Check(MPI_Irecv(in.data(), count, MPI_INT, MPI_ANY_SOURCE, Tag(thread, i),
                    comm, &requests[0]),
          "MPI_Irecv");
    Check(MPI_Isend(out.data(), count, MPI_INT, in_comm(Next()), Tag(thread, i),
                    comm, &requests[1]),
          "MPI_Isend");
    Check(MPI_Comm_free(&comm), "MPI_Comm_free");
    MPI_Status statuses[2];
    Check(MPI_Waitall(2, requests, statuses), "MPI_Waitall");
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (argc != 3 || provided < MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "mpi_threads: usage p2p|wildcard N (thread level %d)\n",
            provided);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  g_iterations = atoi(argv[2]);
  for (MPI_Comm& comm : g_comms) MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  std::vector<std::thread> threads;
  if (strcmp(argv[1], "p2p") == 0) {
    threads.emplace_back(Private, 0);
    threads.emplace_back(Private, 1);
    threads.emplace_back(Issuer, 2);
    threads.emplace_back(Completer);
  } else {
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(Wildcard, t);
  }
  for (std::thread& thread : threads) thread.join();
  for (MPI_Comm& comm : g_comms) MPI_Comm_free(&comm);
  printf("mpi_threads: rank %d done\n", g_rank);
  MPI_Finalize();
  return 0;
}
