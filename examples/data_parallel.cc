// A small data-parallel training loop over MPI, annotated with Meridian's C
// API: each step runs forward, backward (gradients averaged with
// MPI_Allreduce, one per layer, as a framework's gradient hooks would) and
// optimizer phases; every 5 steps rank 0 broadcasts a learning rate.
//
//   data_parallel [--steps N] [--layers N] [--work N] [--print-loop-ns]
//
// --print-loop-ns: rank 0 also prints `loop_ns=N`, the training loop's time
// between two barriers (./bench/run.sh colocated compares it traced and
// untraced).
//
// It runs with or without the probe: the annotations are weak symbols
// (MERIDIAN_PROBE_OPTIONAL) that do nothing unless `meridian run` loaded
// libmeridian_probe.so.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define MERIDIAN_PROBE_OPTIONAL
#include "meridian/probe.h"

namespace {

// Deterministic busy work standing in for a layer's math.
double Compute(std::vector<float>& values, int work) {
  double sum = 0;
  for (int r = 0; r < work; ++r) {
    for (float& v : values) {
      v = v * 0.999f + 0.001f;
      sum += v;
    }
  }
  return sum;
}

int Flag(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (strcmp(argv[i], name) == 0) return atoi(argv[i + 1]);
  }
  return fallback;
}

bool Has(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], name) == 0) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int steps = Flag(argc, argv, "--steps", 20);
  const int layers = Flag(argc, argv, "--layers", 4);
  const int work = Flag(argc, argv, "--work", 20);
  const bool print_loop_ns = Has(argc, argv, "--print-loop-ns");

  // Layer i has 1024 << i parameters.
  std::vector<std::vector<float>> weights, grads;
  for (int i = 0; i < layers; ++i) {
    weights.emplace_back(1024u << i, 1.0f + rank);
    grads.emplace_back(1024u << i, 0.0f);
  }
  float learning_rate = 0.1f;
  double loss = 0;
  if (print_loop_ns) MPI_Barrier(MPI_COMM_WORLD);
  const auto loop_start = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    MERIDIAN_CALL(meridian_step_begin, step);

    MERIDIAN_CALL(meridian_phase_begin, "forward");
    loss = 0;
    for (auto& w : weights) loss += Compute(w, work);
    MERIDIAN_CALL(meridian_phase_end);

    MERIDIAN_CALL(meridian_phase_begin, "backward");
    for (int i = layers - 1; i >= 0; --i) {
      std::fill(grads[i].begin(), grads[i].end(), 0.01f * (rank + 1));
      Compute(grads[i], work);
      uint64_t start = meridian_now_ns ? meridian_now_ns() : 0;
      MPI_Allreduce(MPI_IN_PLACE, grads[i].data(),
                    static_cast<int>(grads[i].size()), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
      if (meridian_now_ns) {
        const std::string tensor = "grad.layer" + std::to_string(i);
        MERIDIAN_CALL(meridian_queue_phase, tensor.c_str(), "ALLREDUCE", start,
                      meridian_now_ns(),
                      static_cast<int64_t>(grads[i].size() * sizeof(float)),
                      -1);
      }
    }
    MERIDIAN_CALL(meridian_phase_end);

    MERIDIAN_CALL(meridian_phase_begin, "optimizer");
    for (int i = 0; i < layers; ++i) {
      for (size_t j = 0; j < weights[i].size(); ++j) {
        weights[i][j] -= learning_rate * grads[i][j] / size;
      }
    }
    if (step % 5 == 4) {
      MPI_Bcast(&learning_rate, 1, MPI_FLOAT, 0, MPI_COMM_WORLD);
      learning_rate *= 0.9f;
    }
    MERIDIAN_CALL(meridian_phase_end);

    MERIDIAN_CALL(meridian_counter, "loss", loss / (1024.0 * (1 << layers)));
    MERIDIAN_CALL(meridian_step_end);
  }
  if (print_loop_ns) MPI_Barrier(MPI_COMM_WORLD);
  const long long loop_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now() - loop_start)
          .count();
  if (rank == 0) {
    printf("data_parallel: %d ranks, %d steps, %d layers done\n", size, steps,
           layers);
    if (print_loop_ns) printf("loop_ns=%lld\n", loop_ns);
  }
  MPI_Finalize();
  return 0;
}
