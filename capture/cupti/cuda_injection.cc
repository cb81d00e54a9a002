// libmeridian_cuda.so: CUDA capture for unmodified programs. `meridian run`
// sets CUDA_INJECTION64_PATH to it; the CUDA driver loads it when the
// program initializes CUDA and calls InitializeInjection, which
//   - subscribes to CUPTI's callbacks for the traced runtime calls and
//     driver launches (CudaApiTracer: spans on the calling threads),
//   - makes CUPTI time its records with the probe's clock
//     (cuptiActivityRegisterTimestampCallback, before any kind is enabled),
//   - enables kernel (concurrent), copy, peer copy and memset activity, and
//     decodes CUPTI's buffers as they complete (ActivityDecoder: spans on
//     GPU stream tracks), flushing at least every 100 ms and at exit,
//     waiting (bounded) for room in the ring rather than dropping.
// CUDA 13 allows one CUPTI subscriber per process: when another tool
// (Nsight Systems, torch.profiler/Kineto, ...) holds it, this says so once
// on stderr and the program runs on without CUDA capture.
#include <cupti.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "capture/cupti/activity_decoder.h"
#include "capture/cupti/cuda_api_tracer.h"
#include "capture/probe/capture_sink.h"

namespace {

using meridian::ActivityDecoder;
using meridian::CudaApiTracer;

constexpr size_t kBufferBytes = 4 << 20;  // as Kineto's
constexpr uint32_t kFlushPeriodMs = 100;

meridian::CaptureSink* g_sink = nullptr;
CudaApiTracer* g_tracer = nullptr;
ActivityDecoder* g_decoder = nullptr;
std::mutex g_decode_mutex;  // per buffer, never per event
CUpti_SubscriberHandle g_subscriber;

uint64_t Timestamp() { return static_cast<uint64_t>(g_sink->NowNs()); }

void CUPTIAPI OnApi(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                    const void* data) {
  const auto* call = static_cast<const CUpti_CallbackData*>(data);
  const CudaApiTracer::Domain which = domain == CUPTI_CB_DOMAIN_DRIVER_API
                                          ? CudaApiTracer::Domain::kDriver
                                          : CudaApiTracer::Domain::kRuntime;
  if (call->callbackSite == CUPTI_API_ENTER) {
    g_tracer->Enter(which, id);
  } else {
    g_tracer->Exit(which, id, call->functionName, call->correlationId);
  }
}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size,
                              size_t* max_records) {
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

// Completed buffers arrive in bursts (every kFlushPeriodMs, or when 4 MiB
// fill), on CUPTI's thread rather than the application's: before each
// kWaitChunk records, that thread waits for room in its ring (the agent
// drains it) instead of dropping, kMaxWaitMs per buffer at most, so that
// an agent that stopped draining costs a bounded delay, then drops.
constexpr uint32_t kWaitChunk = 1024;
constexpr int64_t kMaxWaitMs = 1000;

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t,
                              size_t valid) {
  {
    std::lock_guard<std::mutex> lock(g_decode_mutex);
    const int64_t give_up_ns = g_sink->NowNs() + kMaxWaitMs * 1000000;
    bool wait = true;
    uint32_t until_wait = 0;
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) ==
           CUPTI_SUCCESS) {
      if (wait && until_wait == 0) {
        const int64_t left_ms = (give_up_ns - g_sink->NowNs()) / 1000000;
        wait = left_ms > 0 &&
               g_sink->AwaitRoom(kWaitChunk, static_cast<int>(left_ms));
        until_wait = kWaitChunk;
      }
      --until_wait;
      g_decoder->Decode(record);
    }
  }
  free(buffer);
}

void FlushAtExit() { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }

bool Check(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return true;
  const char* text = "unknown error";
  cuptiGetResultString(result, &text);
  fprintf(stderr, "meridian: %s failed (%s): CUDA activity is not recorded\n",
          what, text);
  return false;
}

void EnableCallbacks(CUpti_CallbackDomain domain, uint32_t count,
                     CudaApiTracer::Domain which) {
  for (uint32_t id = 1; id < count && id < CudaApiTracer::kMaxCallbackIds;
       ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, id, &name) == CUPTI_SUCCESS &&
        CudaApiTracer::Traced(which, name)) {
      cuptiEnableCallback(1, g_subscriber, domain, id);
    }
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(
    void) {
  static std::once_flag once;
  std::call_once(once, [] {
    g_sink = meridian::ProbeCaptureSink();
    if (g_sink == nullptr) {
      fprintf(stderr,
              "meridian: CUDA injection loaded without libmeridian_probe.so "
              "(run under `meridian run`): CUDA activity is not recorded\n");
      return;
    }
    const CUptiResult subscribed =
        cuptiSubscribe(&g_subscriber, OnApi, nullptr);
    if (subscribed == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      fprintf(stderr,
              "meridian: another CUPTI client holds this process (Nsight, "
              "torch.profiler/Kineto...): CUDA kernels and copies are not "
              "recorded; MPI, NCCL and NVTX still are\n");
      return;
    }
    if (!Check(subscribed, "cuptiSubscribe")) return;
    g_tracer = new CudaApiTracer(g_sink);
    g_decoder = new ActivityDecoder(g_sink, g_tracer);
    if (!Check(cuptiActivityRegisterTimestampCallback(Timestamp),
               "cuptiActivityRegisterTimestampCallback") ||
        !Check(cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted),
               "cuptiActivityRegisterCallbacks")) {
      cuptiUnsubscribe(g_subscriber);
      return;
    }
    for (CUpti_ActivityKind kind :
         {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
          CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET}) {
      Check(cuptiActivityEnable(kind), "cuptiActivityEnable");
    }
    EnableCallbacks(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
                    CudaApiTracer::Domain::kRuntime);
    EnableCallbacks(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
                    CudaApiTracer::Domain::kDriver);
    cuptiActivityFlushPeriod(kFlushPeriodMs);
    atexit(FlushAtExit);
  });
  return 1;
}
