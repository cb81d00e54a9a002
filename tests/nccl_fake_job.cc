// Stands in for NCCL where no GPU is: each rank loads the profiler plugin
// `meridian run` names in NCCL_PROFILER_PLUGIN, as NCCL does, and drives it
// as NCCL 2.28 would for 3 steps of one AllReduce (1024 bytes, 2 channels)
// on a 2-rank communicator with hash 0x5eed. The "GPU" timers are
// CLOCK_REALTIME, as an H100's %globaltimer roughly is; each channel's work
// began 5 us before the "proxy" reports it and lasts exactly 200 us.
// Prints the plugin's path; exits 3 if none was set.
#include <dlfcn.h>
#include <mpi.h>
#include <time.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "capture/nccl/nccl_profiler_abi.h"
#define MERIDIAN_PROBE_OPTIONAL
#include "meridian/probe.h"

namespace nccl = meridian::nccl;

namespace {

uint64_t RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + ts.tv_nsec;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* plugin = getenv("NCCL_PROFILER_PLUGIN");
  if (plugin == nullptr) return 3;
  if (rank == 0) printf("nccl plugin: %s\n", plugin);
  void* library = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    fprintf(stderr, "%s\n", dlerror());
    return 4;
  }
  auto* profiler =
      static_cast<nccl::ProfilerV5*>(dlsym(library, "ncclProfiler_v5"));
  if (profiler == nullptr) return 5;
  void* comm = nullptr;
  int mask = 0;
  profiler->init(&comm, 0x5eed, &mask, "", 1, 2, rank, nullptr);
  if ((mask & nccl::kKernelCh) == 0) return 6;

  for (uint64_t step = 0; step < 3; ++step) {
    MERIDIAN_CALL(meridian_step_begin, static_cast<int64_t>(step));
    nccl::EventDescrV5 coll{};
    coll.type = nccl::kColl;
    coll.rank = rank;
    coll.coll.seq = step;
    coll.coll.func = "AllReduce";
    coll.coll.count = 256;
    coll.coll.datatype = "ncclFloat32";
    coll.coll.channels = 2;
    coll.coll.algorithm = "RING";
    coll.coll.protocol = "SIMPLE";
    void* op = nullptr;
    profiler->start_event(comm, &op, &coll);
    profiler->stop_event(op);  // enqueued
    const uint64_t began = RealtimeNs() - 5000;
    void* channels[2];
    for (int c = 0; c < 2; ++c) {
      nccl::EventDescrV5 ch{};
      ch.type = nccl::kKernelCh;
      ch.parent = op;
      ch.kernel_ch.channel = static_cast<uint8_t>(c);
      ch.kernel_ch.gpu_timer = began;
      profiler->start_event(comm, &channels[c], &ch);
    }
    for (int c = 0; c < 2; ++c) {
      nccl::EventStateArgs args{};
      args.kernel_ch.gpu_timer = began + 200000;
      profiler->record_event_state(channels[c], nccl::kKernelChStop, &args);
      profiler->stop_event(channels[c]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MERIDIAN_CALL(meridian_step_end);
  }
  profiler->finalize(comm);
  MPI_Finalize();
  return 0;
}
