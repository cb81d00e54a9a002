#include "capture/cupti/activity_decoder.h"

#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>

namespace meridian {
namespace {

constexpr uint8_t kCategoryKernel = 3;  // v1::CATEGORY_CUDA_KERNEL
constexpr uint8_t kCategoryMemcpy = 4;  // v1::CATEGORY_CUDA_MEMCPY
constexpr uint8_t kCategoryMemset = 5;  // v1::CATEGORY_CUDA_MEMSET
constexpr uint32_t kCacheSize = 4096;   // power of two

const char* CopyName(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "Memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "Memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "Memcpy HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "Memcpy AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "Memcpy AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "Memcpy AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "Memcpy DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "Memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "Memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "Memcpy PtoP";
    default:
      return "Memcpy";
  }
}

const char* MemoryName(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return "array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return "managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return "device_static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return "managed_static";
    default:
      return "unknown";
  }
}

uint32_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

}  // namespace

// Open-addressing tables of string ids: (device, stream) -> track name,
// kernel name pointer (CUPTI keeps one per function) -> demangled name.
struct ActivityDecoder::Cache {
  uint64_t track_key[kCacheSize] = {};
  uint32_t track_id[kCacheSize] = {};
  const char* kernel_key[kCacheSize] = {};
  uint32_t kernel_id[kCacheSize] = {};
};

ActivityDecoder::ActivityDecoder(CaptureSink* sink, const CudaApiTracer* steps)
    : sink_(sink), steps_(steps), cache_(new Cache()) {}

ActivityDecoder::~ActivityDecoder() = default;

uint32_t ActivityDecoder::StreamTrack(uint32_t device, uint32_t stream) {
  const uint64_t key = (static_cast<uint64_t>(device) << 32 | stream) + 1;
  uint32_t slot = Mix(key) & (kCacheSize - 1);
  for (uint32_t n = 0; n < kCacheSize;
       ++n, slot = (slot + 1) & (kCacheSize - 1)) {
    if (cache_->track_key[slot] == key) return cache_->track_id[slot];
    if (cache_->track_key[slot] == 0) break;
  }
  char name[64];
  snprintf(name, sizeof(name), "GPU %u stream %u", device, stream);
  const uint32_t id = sink_->Name(name);
  if (cache_->track_key[slot] == 0) {
    cache_->track_key[slot] = key;
    cache_->track_id[slot] = id;
  }
  return id;
}

uint32_t ActivityDecoder::KernelName(const char* mangled) {
  if (mangled == nullptr) return sink_->Name("kernel");
  const uint64_t key = reinterpret_cast<uintptr_t>(mangled);
  uint32_t slot = Mix(key) & (kCacheSize - 1);
  for (uint32_t n = 0; n < kCacheSize;
       ++n, slot = (slot + 1) & (kCacheSize - 1)) {
    if (cache_->kernel_key[slot] == mangled) return cache_->kernel_id[slot];
    if (cache_->kernel_key[slot] == nullptr) break;
  }
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  const uint32_t id =
      sink_->Name(status == 0 && demangled ? demangled : mangled);
  free(demangled);
  if (cache_->kernel_key[slot] == nullptr) {
    cache_->kernel_key[slot] = mangled;
    cache_->kernel_id[slot] = id;
  }
  return id;
}

void ActivityDecoder::Emit(ProbeRecord* r, uint32_t device, uint32_t stream,
                           uint32_t correlation, uint64_t start, uint64_t end) {
  r->start_ns = static_cast<int64_t>(start);
  r->dur_ns = end > start ? static_cast<int64_t>(end - start) : 0;
  r->queue = StreamTrack(device, stream);
  r->flags |= ProbeRecord::kGpuTrack;
  r->correlation = correlation;
  int64_t step = 0;
  if (steps_ != nullptr && steps_->StepOf(correlation, &step)) {
    r->step = step;
    r->flags |= ProbeRecord::kHasStep;
  }
  sink_->Emit(*r, false);
  ++decoded_;
}

void ActivityDecoder::Decode(const CUpti_Activity* record) {
  ProbeRecord r{};
  char args[160];
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      r.category = kCategoryKernel;
      r.name = KernelName(k->name);
      snprintf(args, sizeof(args),
               "grid=%d,%d,%d;block=%d,%d,%d;registers=%u;smem=%d", k->gridX,
               k->gridY, k->gridZ, k->blockX, k->blockY, k->blockZ,
               static_cast<unsigned>(k->registersPerThread),
               k->staticSharedMemory + k->dynamicSharedMemory);
      r.args = sink_->Name(args);
      Emit(&r, k->deviceId, k->streamId, k->correlationId, k->start, k->end);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      r.category = kCategoryMemcpy;
      r.name = sink_->Name(CopyName(m->copyKind));
      r.bytes = static_cast<int64_t>(m->bytes);
      snprintf(args, sizeof(args), "src=%s;dst=%s", MemoryName(m->srcKind),
               MemoryName(m->dstKind));
      r.args = sink_->Name(args);
      Emit(&r, m->deviceId, m->streamId, m->correlationId, m->start, m->end);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
      const auto* m =
          reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
      r.category = kCategoryMemcpy;
      r.name = sink_->Name("Memcpy PtoP");
      r.bytes = static_cast<int64_t>(m->bytes);
      snprintf(args, sizeof(args), "src_device=%u;dst_device=%u",
               m->srcDeviceId, m->dstDeviceId);
      r.args = sink_->Name(args);
      Emit(&r, m->deviceId, m->streamId, m->correlationId, m->start, m->end);
      return;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      r.category = kCategoryMemset;
      r.name = sink_->Name("Memset");
      r.bytes = static_cast<int64_t>(m->bytes);
      Emit(&r, m->deviceId, m->streamId, m->correlationId, m->start, m->end);
      return;
    }
    default:
      ++skipped_;
  }
}

}  // namespace meridian
