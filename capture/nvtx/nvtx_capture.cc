#include "capture/nvtx/nvtx_capture.h"

#include <cinttypes>
#include <cstdio>

namespace meridian {
namespace {

constexpr uint8_t kCategoryNvtx = 8;  // v1::CATEGORY_NVTX
constexpr uint8_t kKindInstant = 1;   // v1::SPAN_KIND_INSTANT

int DomainIndex(nvtxDomainHandle_t domain) {
  return static_cast<int>(reinterpret_cast<uintptr_t>(domain));
}

}  // namespace

// A push/pop range open on this thread.
struct NvtxCapture::OpenRange {
  int64_t start_ns;
  Named named;
};
thread_local NvtxCapture::OpenRange
    NvtxCapture::tls_stack_[NvtxCapture::kMaxDepth];
thread_local int NvtxCapture::tls_depth_ = 0;

struct NvtxCapture::Range {
  std::atomic<uint64_t> id{0};  // the range id it holds; 0: free
  int64_t start_ns = 0;
  Named named;
};

NvtxCapture::NvtxCapture(CaptureSink* sink)
    : sink_(sink),
      domains_(new Domain[kMaxDomains + 1]()),
      ranges_(new Range[kRangeSlots]) {}

NvtxCapture::~NvtxCapture() = default;

nvtxDomainHandle_t NvtxCapture::DomainCreate(const char* name) {
  const int index = domain_count_.fetch_add(1) + 1;
  if (index > kMaxDomains || name == nullptr) return nullptr;  // default
  Domain& domain = domains_[index];
  snprintf(domain.name, sizeof(domain.name), "%s", name);
  char args[sizeof(domain.name) + 8];
  snprintf(args, sizeof(args), "domain=%s", domain.name);
  domain.args.store(sink_->Name(args), std::memory_order_release);
  return reinterpret_cast<nvtxDomainHandle_t>(static_cast<uintptr_t>(index));
}

nvtxStringHandle_t NvtxCapture::RegisterString(nvtxDomainHandle_t,
                                               const char* text) {
  return reinterpret_cast<nvtxStringHandle_t>(
      static_cast<uintptr_t>(sink_->Name(text)));
}

NvtxCapture::Named NvtxCapture::NameOfMessage(const char* message) {
  Named named;
  named.name = sink_->Name(message != nullptr ? message : "");
  return named;
}

NvtxCapture::Named NvtxCapture::NameOf(
    nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  Named named;
  const int index = DomainIndex(domain);
  if (index > 0 && index <= kMaxDomains) {
    named.args = domains_[index].args.load(std::memory_order_acquire);
  }
  if (attributes == nullptr) {
    named.name = sink_->Name("");
    return named;
  }
  switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      named.name = sink_->Name(attributes->message.ascii != nullptr
                                   ? attributes->message.ascii
                                   : "");
      break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      named.name = static_cast<uint32_t>(
          reinterpret_cast<uintptr_t>(attributes->message.registered));
      break;
    case NVTX_MESSAGE_TYPE_UNICODE:
      named.name = sink_->Name("(wide string)");
      break;
    default:
      named.name = sink_->Name("");
  }
  char payload[64] = "";
  switch (attributes->payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
      snprintf(payload, sizeof(payload), "payload=%" PRIu64,
               attributes->payload.ullValue);
      break;
    case NVTX_PAYLOAD_TYPE_INT64:
      snprintf(payload, sizeof(payload), "payload=%" PRId64,
               attributes->payload.llValue);
      break;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
      snprintf(payload, sizeof(payload), "payload=%u",
               attributes->payload.uiValue);
      break;
    case NVTX_PAYLOAD_TYPE_INT32:
      snprintf(payload, sizeof(payload), "payload=%d",
               attributes->payload.iValue);
      break;
    case NVTX_PAYLOAD_TYPE_DOUBLE:
      snprintf(payload, sizeof(payload), "payload=%.17g",
               attributes->payload.dValue);
      break;
    case NVTX_PAYLOAD_TYPE_FLOAT:
      snprintf(payload, sizeof(payload), "payload=%.9g",
               attributes->payload.fValue);
      break;
    default:
      break;
  }
  if (payload[0] != '\0') {
    char args[400];
    if (index > 0 && index <= kMaxDomains) {
      snprintf(args, sizeof(args), "domain=%s;%s", domains_[index].name,
               payload);
    } else {
      snprintf(args, sizeof(args), "%s", payload);
    }
    named.args = sink_->Name(args);
  }
  return named;
}

void NvtxCapture::Emit(const Named& named, int64_t start, int64_t end,
                       bool instant) {
  ProbeRecord r{};
  r.start_ns = start;
  r.dur_ns = end - start;
  r.name = named.name;
  r.args = named.args;
  r.category = kCategoryNvtx;
  if (instant) r.kind = kKindInstant;
  sink_->Emit(r, true);
}

int NvtxCapture::Open(const Named& named) {
  if (tls_depth_ < kMaxDepth) tls_stack_[tls_depth_] = {sink_->NowNs(), named};
  return ++tls_depth_;
}

int NvtxCapture::Push(nvtxDomainHandle_t domain,
                      const nvtxEventAttributes_t* attributes) {
  if (!sink_->Recording()) return tls_depth_;
  return Open(NameOf(domain, attributes));
}

int NvtxCapture::PushMessage(const char* message) {
  if (!sink_->Recording()) return tls_depth_;
  return Open(NameOfMessage(message));
}

int NvtxCapture::Pop(nvtxDomainHandle_t) {
  // Ranges of every domain nest on the thread's one stack.
  if (tls_depth_ == 0) return -1;
  const int depth = tls_depth_--;
  if (depth > kMaxDepth) return depth;
  const OpenRange& open = tls_stack_[depth - 1];
  Emit(open.named, open.start_ns, sink_->NowNs(), false);
  return depth;
}

nvtxRangeId_t NvtxCapture::Begin(const Named& named) {
  const uint64_t id = next_range_.fetch_add(1) + 1;
  Range& range = ranges_[id % kRangeSlots];
  range.named = named;
  range.start_ns = sink_->NowNs();
  range.id.store(id, std::memory_order_release);
  return id;
}

nvtxRangeId_t NvtxCapture::Start(nvtxDomainHandle_t domain,
                                 const nvtxEventAttributes_t* attributes) {
  if (!sink_->Recording()) return 0;
  return Begin(NameOf(domain, attributes));
}

nvtxRangeId_t NvtxCapture::StartMessage(const char* message) {
  if (!sink_->Recording()) return 0;
  return Begin(NameOfMessage(message));
}

void NvtxCapture::End(nvtxDomainHandle_t, nvtxRangeId_t id) {
  if (id == 0) return;
  Range& range = ranges_[id % kRangeSlots];
  uint64_t expected = id;
  // A range whose slot was taken by a newer one (4096 later) is lost.
  if (!range.id.compare_exchange_strong(expected, 0,
                                        std::memory_order_acq_rel)) {
    return;
  }
  Emit(range.named, range.start_ns, sink_->NowNs(), false);
}

void NvtxCapture::Instant(const Named& named) {
  const int64_t now = sink_->NowNs();
  Emit(named, now, now, true);
}

void NvtxCapture::Mark(nvtxDomainHandle_t domain,
                       const nvtxEventAttributes_t* attributes) {
  if (sink_->Recording()) Instant(NameOf(domain, attributes));
}

void NvtxCapture::MarkMessage(const char* message) {
  if (sink_->Recording()) Instant(NameOfMessage(message));
}

void NvtxCapture::NameThread(uint32_t tid, const char* name) {
  if (!sink_->Recording() || name == nullptr) return;
  char text[300];
  snprintf(text, sizeof(text), "thread name: %.256s", name);
  Named named;
  named.name = sink_->Name(text);
  snprintf(text, sizeof(text), "tid=%u;name=%.256s", tid, name);
  named.args = sink_->Name(text);
  Instant(named);
}

}  // namespace meridian
