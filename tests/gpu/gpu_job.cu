// A small CUDA + NCCL program for tests/gpu/run.sh: per step, NVTX ranges
// around a host-to-device copy, a memset, a kernel, an AllReduce over an
// NCCL communicator of the visible GPUs (at most 2, one process) and a
// device-to-host copy, then a stream synchronize. Unmodified by Meridian:
// `meridian run` captures it. (NCCL appears to run a single-rank
// AllReduce as a plain copy, without kernels or kernel-channel events, so
// NCCL executions with GPU time are required only with 2 GPUs.)
//
//   gpu_job [STEPS] [ELEMENTS]     defaults 20 and 1<<20 floats
#include <cuda_runtime.h>
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(call)                                \
  do {                                                  \
    cudaError_t e = (call);                             \
    if (e != cudaSuccess) {                             \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, \
              cudaGetErrorString(e));                   \
      exit(1);                                          \
    }                                                   \
  } while (0)
#define CHECK_NCCL(call)                                \
  do {                                                  \
    ncclResult_t r = (call);                            \
    if (r != ncclSuccess) {                             \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, \
              ncclGetErrorString(r));                   \
      exit(1);                                          \
    }                                                   \
  } while (0)

__global__ void Scale(float* x, int n, float a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + 1.0f;
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? atoi(argv[1]) : 20;
  const int n = argc > 2 ? atoi(argv[2]) : 1 << 20;
  int ndev = 0;
  CHECK_CUDA(cudaGetDeviceCount(&ndev));
  if (ndev > 2) ndev = 2;
  std::vector<float> host(n, 1.0f);
  std::vector<float*> device(ndev);
  std::vector<cudaStream_t> stream(ndev);
  std::vector<int> devices(ndev);
  for (int d = 0; d < ndev; ++d) {
    devices[d] = d;
    CHECK_CUDA(cudaSetDevice(d));
    CHECK_CUDA(cudaMalloc(&device[d], n * sizeof(float)));
    CHECK_CUDA(cudaStreamCreate(&stream[d]));
  }
  std::vector<ncclComm_t> comm(ndev);
  CHECK_NCCL(ncclCommInitAll(comm.data(), ndev, devices.data()));
  for (int step = 0; step < steps; ++step) {
    nvtxRangePushA("step");
    nvtxRangePushA("forward");
    for (int d = 0; d < ndev; ++d) {
      CHECK_CUDA(cudaSetDevice(d));
      CHECK_CUDA(cudaMemcpyAsync(device[d], host.data(), n * sizeof(float),
                                 cudaMemcpyHostToDevice, stream[d]));
      CHECK_CUDA(cudaMemsetAsync(device[d], 0, 64, stream[d]));
      Scale<<<(n + 255) / 256, 256, 0, stream[d]>>>(device[d], n, 0.5f);
      CHECK_CUDA(cudaGetLastError());
    }
    nvtxRangePop();
    nvtxRangePushA("allreduce");
    CHECK_NCCL(ncclGroupStart());
    for (int d = 0; d < ndev; ++d) {
      CHECK_NCCL(ncclAllReduce(device[d], device[d], n, ncclFloat, ncclSum,
                               comm[d], stream[d]));
    }
    CHECK_NCCL(ncclGroupEnd());
    nvtxRangePop();
    for (int d = 0; d < ndev; ++d) {
      CHECK_CUDA(cudaSetDevice(d));
      CHECK_CUDA(cudaMemcpyAsync(host.data(), device[d], n * sizeof(float),
                                 cudaMemcpyDeviceToHost, stream[d]));
      CHECK_CUDA(cudaStreamSynchronize(stream[d]));
    }
    nvtxRangePop();
  }
  for (int d = 0; d < ndev; ++d) {
    CHECK_NCCL(ncclCommDestroy(comm[d]));
    CHECK_CUDA(cudaFree(device[d]));
  }
  printf("gpu_job: %d GPUs, %d steps of %d floats, x[1] = %g\n", ndev, steps, n,
         host[1]);
  return 0;
}
