// NvtxCapture: NVTX ranges, marks and domains as spans (category NVTX).
// libmeridian_nvtx.so (nvtx_injection.cc) points NVTX's callback tables at
// it when a program's NVTX initializes with NVTX_INJECTION64_PATH set.
//
//   push/pop (per thread; all domains   -> a span on the thread, from push
//   share the thread's stack)              to the matching pop
//   start/end (may cross threads)       -> a span on the thread that ends it
//   marks                               -> an instant on the thread
//   domains ("NCCL", "Megatron"...)     -> arg domain=NAME on their spans
//   registered strings                  -> their text as the span's name
//   nvtxNameOsThread                    -> an instant "thread name: NAME"
//                                          with args tid and name
// A range's numeric payload becomes arg payload. Wide-character messages
// are not decoded (the span is named "(wide string)"). Spans are stamped
// with the training step current at their end.
//
// Handles given to NVTX are numbers, not pointers: a domain handle is the
// domain's index + 1, a string handle the string's id in the probe, a
// range id (slot, generation). No allocation per event; a lock only the
// first time a string or domain name is seen.
// Thread-safe.
#ifndef MERIDIAN_CAPTURE_NVTX_NVTX_CAPTURE_H_
#define MERIDIAN_CAPTURE_NVTX_NVTX_CAPTURE_H_

#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "capture/probe/capture_sink.h"

namespace meridian {

class NvtxCapture {
 public:
  static constexpr int kMaxDomains = 256;
  static constexpr int kMaxDepth = 64;
  static constexpr uint32_t kRangeSlots = 4096;

  explicit NvtxCapture(CaptureSink* sink);
  ~NvtxCapture();

  nvtxDomainHandle_t DomainCreate(const char* name);
  nvtxStringHandle_t RegisterString(nvtxDomainHandle_t domain,
                                    const char* text);

  // `domain` null: the default domain. Push returns the depth after the
  // push (NVTX's convention), Pop the depth before it, or -1.
  int Push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes);
  int PushMessage(const char* message);
  int Pop(nvtxDomainHandle_t domain);
  nvtxRangeId_t Start(nvtxDomainHandle_t domain,
                      const nvtxEventAttributes_t* attributes);
  nvtxRangeId_t StartMessage(const char* message);
  void End(nvtxDomainHandle_t domain, nvtxRangeId_t id);
  void Mark(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes);
  void MarkMessage(const char* message);
  void NameThread(uint32_t tid, const char* name);

 private:
  struct Named {
    uint32_t name = 0;
    uint32_t args = 0;
  };
  struct OpenRange;
  struct Range;
  struct Domain {
    char name[128];
    std::atomic<uint32_t> args;  // "domain=NAME", set before the handle
  };
  // Push, Start and Mark once `named` is known (and recording).
  int Open(const Named& named);
  nvtxRangeId_t Begin(const Named& named);
  void Instant(const Named& named);
  Named NameOf(nvtxDomainHandle_t domain,
               const nvtxEventAttributes_t* attributes);
  Named NameOfMessage(const char* message);
  void Emit(const Named& named, int64_t start, int64_t end, bool instant);

  CaptureSink* const sink_;
  std::unique_ptr<Domain[]> domains_;  // by handle: index + 1
  std::atomic<int> domain_count_{0};
  std::unique_ptr<Range[]> ranges_;
  std::atomic<uint64_t> next_range_{0};
  static thread_local OpenRange tls_stack_[kMaxDepth];
  static thread_local int tls_depth_;
};

}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_NVTX_NVTX_CAPTURE_H_
