// The loop bench/gpu_bench.sh times with and without Meridian's CUDA and
// NCCL capture: per iteration, 10 tiny kernels and one 8-float AllReduce
// over the visible GPUs (at most 2, one process), then a synchronize.
// Prints "ns_per_iteration N" (median of 5 rounds of 1000 iterations,
// after 200 warm-up iterations).
#include <cuda_runtime.h>
#include <nccl.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <vector>

__global__ void Tiny(float* x) { x[threadIdx.x] += 1.0f; }

static long long NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main() {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) return 1;
  if (ndev > 2) ndev = 2;
  std::vector<float*> buffer(ndev);
  std::vector<cudaStream_t> stream(ndev);
  std::vector<int> devices(ndev);
  for (int d = 0; d < ndev; ++d) {
    devices[d] = d;
    cudaSetDevice(d);
    cudaMalloc(&buffer[d], 64 * sizeof(float));
    cudaMemset(buffer[d], 0, 64 * sizeof(float));
    cudaStreamCreate(&stream[d]);
  }
  std::vector<ncclComm_t> comm(ndev);
  if (ncclCommInitAll(comm.data(), ndev, devices.data()) != ncclSuccess) {
    return 2;
  }
  auto iteration = [&] {
    for (int d = 0; d < ndev; ++d) {
      cudaSetDevice(d);
      for (int k = 0; k < 10; ++k) Tiny<<<1, 32, 0, stream[d]>>>(buffer[d]);
    }
    ncclGroupStart();
    for (int d = 0; d < ndev; ++d) {
      ncclAllReduce(buffer[d], buffer[d], 8, ncclFloat, ncclSum, comm[d],
                    stream[d]);
    }
    ncclGroupEnd();
    for (int d = 0; d < ndev; ++d) cudaStreamSynchronize(stream[d]);
  };
  for (int i = 0; i < 200; ++i) iteration();
  std::vector<long long> rounds;
  for (int r = 0; r < 5; ++r) {
    const long long start = NowNs();
    for (int i = 0; i < 1000; ++i) iteration();
    rounds.push_back((NowNs() - start) / 1000);
  }
  std::sort(rounds.begin(), rounds.end());
  printf("ns_per_iteration %lld\n", rounds[2]);
  for (int d = 0; d < ndev; ++d) ncclCommDestroy(comm[d]);
  return 0;
}
