#include "abi/span_ring.h"

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
  position_ = header_->tail.load(std::memory_order_acquire);
}

size_t SpanRingReader::Read(ProbeRecord* out, size_t max) {
  const uint64_t tail = header_->tail.load(std::memory_order_relaxed);
  const uint64_t head = header_->head.load(std::memory_order_acquire);
  // A corrupted producer cannot make us read past the ring or re-read slots
  // it may already reuse.
  if (position_ - tail > capacity_) position_ = tail;
  uint64_t available = head - position_;
  if (available > capacity_ - (position_ - tail)) {
    available = capacity_ - (position_ - tail);
  }
  size_t n = 0;
  for (uint64_t i = position_; n < available && n < max; ++i) {
    out[n++] = records_[i & (capacity_ - 1)];
  }
  position_ += n;
  return n;
}

}  // namespace meridian
