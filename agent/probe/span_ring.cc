#include "agent/probe/span_ring.h"

#include <new>

namespace meridian {
namespace {

// The header if `memory` holds a valid ring within `bytes`, else nullptr.
RingHeader* CheckedHeader(const void* memory, size_t bytes) {
  if (memory == nullptr || bytes < sizeof(RingHeader)) return nullptr;
  auto* header = static_cast<RingHeader*>(const_cast<void*>(memory));
  const uint64_t capacity = header->capacity;
  if (header->magic != RingHeader::kMagic ||
      header->version != RingHeader::kVersion ||
      header->record_bytes != sizeof(ProbeRecord) || capacity == 0 ||
      (capacity & (capacity - 1)) != 0 ||
      capacity > (bytes - sizeof(RingHeader)) / sizeof(ProbeRecord)) {
    return nullptr;
  }
  return header;
}

}  // namespace

bool InitSpanRing(void* memory, uint64_t capacity) {
  if (capacity == 0 || (capacity & (capacity - 1)) != 0) return false;
  auto* header = new (memory) RingHeader();
  header->magic = RingHeader::kMagic;
  header->version = RingHeader::kVersion;
  header->record_bytes = sizeof(ProbeRecord);
  header->capacity = capacity;
  header->head.store(0, std::memory_order_relaxed);
  header->tail.store(0, std::memory_order_relaxed);
  header->dropped.store(0, std::memory_order_release);
  return true;
}

SpanRingWriter::SpanRingWriter(void* memory, size_t bytes) {
  header_ = CheckedHeader(memory, bytes);
  if (header_ == nullptr) return;
  records_ = reinterpret_cast<ProbeRecord*>(header_ + 1);
  capacity_ = header_->capacity;
  head_ = header_->head.load(std::memory_order_relaxed);
  cached_tail_ = header_->tail.load(std::memory_order_acquire);
}

SpanRingReader::SpanRingReader(const void* memory, size_t bytes) {
  header_ = CheckedHeader(memory, bytes);
  if (header_ == nullptr) return;
  records_ = reinterpret_cast<const ProbeRecord*>(header_ + 1);
  capacity_ = header_->capacity;
}

size_t SpanRingReader::Drain(ProbeRecord* out, size_t max) {
  const uint64_t tail = header_->tail.load(std::memory_order_relaxed);
  const uint64_t head = header_->head.load(std::memory_order_acquire);
  // A producer that was corrupted cannot make us read past the ring.
  uint64_t available = head - tail;
  if (available > capacity_) available = capacity_;
  size_t n = 0;
  for (uint64_t i = tail; n < available && n < max; ++i) {
    out[n++] = records_[i & (capacity_ - 1)];
  }
  header_->tail.store(tail + n, std::memory_order_release);
  return n;
}

}  // namespace meridian
