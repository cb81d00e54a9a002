#include "capture/cupti/cuda_api_tracer.h"

#include <cstring>

namespace meridian {
namespace {

constexpr uint8_t kCategoryCudaSync = 6;     // v1::CATEGORY_CUDA_SYNC
constexpr uint8_t kCategoryCudaRuntime = 7;  // v1::CATEGORY_CUDA_RUNTIME
constexpr int kMaxDepth = 8;

bool StartsWith(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

// Calls in progress on this thread (a traced call may make another).
struct OpenCall {
  int64_t start_ns;
  uint32_t key;
};
thread_local OpenCall tls_calls[kMaxDepth];
thread_local int tls_depth = 0;
// Depth of traced runtime calls: driver launches inside them are theirs.
thread_local int tls_runtime_depth = 0;

uint32_t Key(CudaApiTracer::Domain domain, uint32_t id) {
  return (domain == CudaApiTracer::Domain::kDriver
              ? CudaApiTracer::kMaxCallbackIds
              : 0) +
         id;
}

}  // namespace

CudaApiTracer::CudaApiTracer(CaptureSink* sink)
    : sink_(sink),
      names_(new std::atomic<uint32_t>[2 * kMaxCallbackIds]()),
      steps_(new std::atomic<uint64_t>[kStepSlots]()) {}

bool CudaApiTracer::Traced(Domain domain, const char* name) {
  if (name == nullptr) return false;
  if (domain == Domain::kDriver) {
    return StartsWith(name, "cuLaunch") || StartsWith(name, "cuGraphLaunch");
  }
  return StartsWith(name, "cudaLaunch") ||
         StartsWith(name, "cudaGraphLaunch") ||
         StartsWith(name, "cudaMemcpy") || StartsWith(name, "cudaMemset") ||
         strstr(name, "Synchronize") != nullptr;
}

void CudaApiTracer::Enter(Domain domain, uint32_t id) {
  if (id >= kMaxCallbackIds) return;
  if (domain == Domain::kRuntime) {
    ++tls_runtime_depth;
  } else if (tls_runtime_depth > 0) {
    return;
  }
  if (tls_depth < kMaxDepth) {
    tls_calls[tls_depth] = {sink_->NowNs(), Key(domain, id)};
  }
  ++tls_depth;
}

void CudaApiTracer::Exit(Domain domain, uint32_t id, const char* name,
                         uint32_t correlation) {
  if (id >= kMaxCallbackIds) return;
  if (domain == Domain::kRuntime) {
    if (tls_runtime_depth > 0) --tls_runtime_depth;
  } else if (tls_runtime_depth > 0) {
    return;
  }
  if (tls_depth == 0) return;  // entered before tracing began
  --tls_depth;
  if (tls_depth >= kMaxDepth) return;
  const OpenCall call = tls_calls[tls_depth];
  const uint32_t key = Key(domain, id);
  if (call.key != key || !sink_->Recording()) return;

  uint32_t name_id = names_[key].load(std::memory_order_relaxed);
  if (name_id == 0) {
    name_id = sink_->Name(name);
    names_[key].store(name_id, std::memory_order_relaxed);
  }
  ProbeRecord r{};
  r.start_ns = call.start_ns;
  r.dur_ns = sink_->NowNs() - call.start_ns;
  r.name = name_id;
  r.category = name != nullptr && strstr(name, "Synchronize") != nullptr
                   ? kCategoryCudaSync
                   : kCategoryCudaRuntime;
  r.correlation = correlation;
  int64_t step = 0;
  if (sink_->Step(&step)) {
    r.step = step;
    r.flags |= ProbeRecord::kHasStep;
    steps_[correlation % kStepSlots].store(static_cast<uint64_t>(correlation)
                                                   << 32 |
                                               static_cast<uint32_t>(step + 1),
                                           std::memory_order_relaxed);
  }
  sink_->Emit(r, false);
}

bool CudaApiTracer::StepOf(uint32_t correlation, int64_t* step) const {
  const uint64_t slot =
      steps_[correlation % kStepSlots].load(std::memory_order_relaxed);
  if (slot == 0 || slot >> 32 != correlation) return false;
  *step = static_cast<int64_t>(static_cast<uint32_t>(slot)) - 1;
  return true;
}

}  // namespace meridian
