// CUPTI's own cost, with nothing of Meridian: a CUDA injection library
// (CUDA_INJECTION64_PATH) that enables what libmeridian_cuda.so enables
// (capture/cupti/cuda_injection.cc) and does nothing with it. The callbacks
// are empty, activity buffers are walked and freed, and there is no probe,
// agent or collector. bench/gpu_bench.sh runs the benchmark loop under it
// beside the untraced and the traced runs, so that Meridian's share of
// the GPU slowdown is a ratio within one run.
#include <cupti.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <initializer_list>

namespace {

constexpr size_t kBufferBytes = 4 << 20;  // as libmeridian_cuda.so
CUpti_SubscriberHandle g_subscriber;
volatile uint64_t g_kinds;  // keeps the buffer walk from being optimized out

void CUPTIAPI OnApi(void*, CUpti_CallbackDomain, CUpti_CallbackId,
                    const void*) {}

void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size,
                              size_t* max_records) {
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI BufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t,
                              size_t valid) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    g_kinds = g_kinds + record->kind;
  }
  free(buffer);
}

uint64_t Timestamp() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000000000ull + now.tv_nsec;
}

bool StartsWith(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

// The calls CudaApiTracer::Traced selects.
bool Traced(CUpti_CallbackDomain domain, const char* name) {
  if (name == nullptr) return false;
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    return StartsWith(name, "cuLaunch") || StartsWith(name, "cuGraphLaunch");
  }
  return StartsWith(name, "cudaLaunch") ||
         StartsWith(name, "cudaGraphLaunch") ||
         StartsWith(name, "cudaMemcpy") || StartsWith(name, "cudaMemset") ||
         strstr(name, "Synchronize") != nullptr;
}

void EnableCallbacks(CUpti_CallbackDomain domain, uint32_t count) {
  for (uint32_t id = 1; id < count; ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, id, &name) == CUPTI_SUCCESS &&
        Traced(domain, name)) {
      cuptiEnableCallback(1, g_subscriber, domain, id);
    }
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(
    void) {
  if (cuptiSubscribe(&g_subscriber, OnApi, nullptr) != CUPTI_SUCCESS) return 1;
  cuptiActivityRegisterTimestampCallback(Timestamp);
  cuptiActivityRegisterCallbacks(BufferRequested, BufferCompleted);
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET}) {
    cuptiActivityEnable(kind);
  }
  EnableCallbacks(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
  EnableCallbacks(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
  cuptiActivityFlushPeriod(100);
  atexit([] { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); });
  return 1;
}
