// libnccl-profiler-meridian.so: Meridian's NCCL profiler plugin. Exports
// `ncclProfiler_v5` (NCCL 2.28) and `ncclProfiler_v4` (NCCL 2.27), both
// over one NcclProfiler that records into the probe of the process
// (libmeridian_probe.so, which `meridian run` preloads). Without the probe
// it says so once on stderr and asks NCCL for no events.
#include <cstdio>

#include "capture/nccl/nccl_profiler.h"
#include "capture/nccl/nccl_profiler_abi.h"
#include "capture/probe/capture_sink.h"

namespace {

using meridian::NcclProfiler;
namespace nccl = meridian::nccl;

NcclProfiler* Profiler() {
  // Never destroyed: NCCL may finalize communicators during exit.
  static NcclProfiler* profiler = [] {
    meridian::CaptureSink* sink = meridian::ProbeCaptureSink();
    if (sink == nullptr) {
      fprintf(stderr,
              "meridian: NCCL profiler plugin loaded without "
              "libmeridian_probe.so (run under `meridian run`): NCCL "
              "operations are not recorded\n");
    }
    return new NcclProfiler(sink);
  }();
  return profiler;
}

nccl::Result InitV5(void** context, uint64_t comm_hash, int* mask,
                    const char* comm_name, int nodes, int ranks, int rank,
                    nccl::Logger) {
  return Profiler()->Init(context, comm_hash, mask, comm_name, nodes, ranks,
                          rank);
}

nccl::Result InitV4(void** context, int* mask, const char* comm_name,
                    uint64_t comm_hash, int nodes, int ranks, int rank,
                    nccl::Logger) {
  return Profiler()->Init(context, comm_hash, mask, comm_name, nodes, ranks,
                          rank);
}

nccl::Result StartV5(void* context, void** handle, nccl::EventDescrV5* descr) {
  return Profiler()->StartEvent(context, handle, descr);
}

// Version 4's descriptor, in version 5's layout.
nccl::Result StartV4(void* context, void** handle, nccl::EventDescrV4* descr) {
  *handle = nullptr;
  if (descr == nullptr) return nccl::kSuccess;
  nccl::EventDescrV5 v5{};
  v5.type = descr->type;
  v5.parent = descr->parent;
  v5.rank = descr->rank;
  switch (descr->type) {
    case nccl::kColl:
      v5.coll.seq = descr->coll.seq;
      v5.coll.func = descr->coll.func;
      v5.coll.send_buffer = descr->coll.send_buffer;
      v5.coll.recv_buffer = descr->coll.recv_buffer;
      v5.coll.count = descr->coll.count;
      v5.coll.root = descr->coll.root;
      v5.coll.datatype = descr->coll.datatype;
      v5.coll.channels = descr->coll.channels;
      v5.coll.warps = descr->coll.warps;
      v5.coll.algorithm = descr->coll.algorithm;
      v5.coll.protocol = descr->coll.protocol;
      break;
    case nccl::kP2p:
      v5.p2p.func = descr->p2p.func;
      v5.p2p.buffer = descr->p2p.buffer;
      v5.p2p.datatype = descr->p2p.datatype;
      v5.p2p.count = descr->p2p.count;
      v5.p2p.peer = descr->p2p.peer;
      v5.p2p.channels = descr->p2p.channels;
      break;
    case nccl::kKernelCh:
      v5.kernel_ch.channel = descr->kernel_ch.channel;
      v5.kernel_ch.gpu_timer = descr->kernel_ch.gpu_timer;
      break;
    default:
      return nccl::kSuccess;  // not asked for
  }
  return Profiler()->StartEvent(context, handle, &v5);
}

nccl::Result Stop(void* handle) { return Profiler()->StopEvent(handle); }

nccl::Result RecordState(void* handle, int state, nccl::EventStateArgs* args) {
  return Profiler()->RecordEventState(handle, state, args);
}

nccl::Result Finalize(void* context) { return Profiler()->Finalize(context); }

}  // namespace

extern "C" {

__attribute__((visibility("default"))) nccl::ProfilerV5 ncclProfiler_v5 = {
    "Meridian", InitV5, StartV5, Stop, RecordState, Finalize};

__attribute__((visibility("default"))) nccl::ProfilerV4 ncclProfiler_v4 = {
    "Meridian", InitV4, StartV4, Stop, RecordState, Finalize};

}  // extern "C"
