// HandleTable: a fixed-size, lock-free map from an opaque handle (an MPI
// communicator or request, as an integer) to a small value, for the probe's
// event path.
//
// Each key hashes to a bucket of kProbe consecutive slots; Insert takes the
// key's own slot or the first free one of the bucket, the others look only
// there. So every operation costs at most kProbe slot reads, however long the
// program runs, and a table whose bucket is full refuses the insert (the
// caller counts it) instead of growing. The keys live apart from the values,
// a bucket's keys on whole cache lines (16 keys: two lines), so a lookup
// that misses reads those lines only. A slot is claimed with a
// compare-and-swap on its key, filled, then published; Take frees it.
//
// Handles are reused: once MPI completes a request it may hand the same
// handle to another thread's next call, before the thread that completed it
// has taken its entry. So a thread about to complete a request marks its
// entry first (Mark, which returns the entry's ticket); Insert, Find, Take
// and Mark pass over marked entries (Insert takes another slot), and the
// completing thread then takes its own entry by its ticket (TakeMarked) or,
// if the request did not complete, unmarks it (Unmark). Two marked entries
// may share a key (the handle's last use and its next): the tickets tell
// them apart.
//
// Thread-safe for distinct keys; one key is used by one thread at a time
// (an MPI request is completed once, a communicator freed once). Keys are
// non-zero and below 2^63 (pointers of user space, 32-bit handles). Values
// are trivially copyable.
#ifndef MERIDIAN_CAPTURE_PROBE_HANDLE_TABLE_H_
#define MERIDIAN_CAPTURE_PROBE_HANDLE_TABLE_H_

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace meridian {

template <typename Value, uint32_t kSize, uint32_t kProbe = 16>
class HandleTable {
  static_assert((kSize & (kSize - 1)) == 0 && (kProbe & (kProbe - 1)) == 0 &&
                kProbe <= kSize);
  static_assert(std::is_trivially_copyable_v<Value>);

 public:
  // Stores `value` for `key`, replacing an unmarked older value of the same
  // key (a handle whose completion the probe never saw). False if the
  // key's bucket is full or the key is out of range.
  bool Insert(uint64_t key, const Value& value) {
    if (key == kFree || key >= kMarked) return false;
    std::atomic<uint64_t>* keys = Bucket(key);
    for (int attempt = 0; attempt < 4; ++attempt) {
      std::atomic<uint64_t>* free = nullptr;
      for (uint32_t i = 0; i < kProbe; ++i) {
        const uint64_t state = keys[i].load(std::memory_order_acquire);
        if (state == key) {
          uint64_t expected = key;
          if (keys[i].compare_exchange_strong(expected, kBusy,
                                              std::memory_order_acquire)) {
            return Publish(&keys[i], key, value);
          }
        } else if (state == kFree && free == nullptr) {
          free = &keys[i];
        }
      }
      if (free == nullptr) return false;
      uint64_t expected = kFree;
      if (free->compare_exchange_strong(expected, kBusy,
                                        std::memory_order_acquire)) {
        return Publish(free, key, value);
      }
    }
    return false;
  }

  // The value of `key` (unmarked), or nullptr. The pointer stays valid
  // until the key is taken.
  Value* Find(uint64_t key) {
    std::atomic<uint64_t>* slot = Slot(key);
    return slot != nullptr ? &values_[slot - keys_] : nullptr;
  }

  // Removes `key` (unmarked), copying its value to `out`; false if absent.
  bool Take(uint64_t key, Value* out) {
    std::atomic<uint64_t>* slot = Slot(key);
    if (slot == nullptr) return false;
    if (out != nullptr) *out = values_[slot - keys_];
    slot->store(kFree, std::memory_order_release);
    return true;
  }

  // Marks `key`'s entry as being completed by the calling thread and
  // returns its ticket; 0 if it has none. Only that thread may use the
  // ticket, once: TakeMarked or Unmark.
  uint32_t Mark(uint64_t key) {
    std::atomic<uint64_t>* slot = Slot(key);
    if (slot == nullptr) return 0;
    uint64_t expected = key;
    if (!slot->compare_exchange_strong(expected, key | kMarked,
                                       std::memory_order_acq_rel)) {
      return 0;
    }
    return static_cast<uint32_t>(slot - keys_) + 1;
  }

  // Removes the entry of `ticket` (0: none), copying its value to `out`;
  // false if it is not a marked entry.
  bool TakeMarked(uint32_t ticket, Value* out) {
    std::atomic<uint64_t>* slot = Marked(ticket);
    if (slot == nullptr) return false;
    if (out != nullptr) *out = values_[ticket - 1];
    slot->store(kFree, std::memory_order_release);
    return true;
  }

  // The value of the calling thread's marked entry `ticket` (0: none), or
  // nullptr. Valid until the ticket is used.
  const Value* PeekMarked(uint32_t ticket) {
    return Marked(ticket) == nullptr ? nullptr : &values_[ticket - 1];
  }

  // Unmarks the entry of `ticket` (0: none): its key finds it again.
  void Unmark(uint32_t ticket) {
    if (std::atomic<uint64_t>* slot = Marked(ticket)) {
      slot->store(slot->load(std::memory_order_relaxed) & ~kMarked,
                  std::memory_order_release);
    }
  }

 private:
  static constexpr uint64_t kFree = 0;
  static constexpr uint64_t kMarked = 1ULL << 63;
  static constexpr uint64_t kBusy = ~0ULL;  // being filled

  std::atomic<uint64_t>* Bucket(uint64_t key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return &keys_[static_cast<uint32_t>(key) & (kSize - 1) & ~(kProbe - 1)];
  }

  // The unmarked slot of `key`.
  std::atomic<uint64_t>* Slot(uint64_t key) {
    if (key == kFree || key >= kMarked) return nullptr;
    std::atomic<uint64_t>* keys = Bucket(key);
    for (uint32_t i = 0; i < kProbe; ++i) {
      if (keys[i].load(std::memory_order_acquire) == key) return &keys[i];
    }
    return nullptr;
  }

  std::atomic<uint64_t>* Marked(uint32_t ticket) {
    if (ticket == 0 || ticket > kSize) return nullptr;
    const uint64_t state = keys_[ticket - 1].load(std::memory_order_acquire);
    if (state == kBusy || (state & kMarked) == 0) return nullptr;
    return &keys_[ticket - 1];
  }

  bool Publish(std::atomic<uint64_t>* slot, uint64_t key, const Value& value) {
    values_[slot - keys_] = value;
    slot->store(key, std::memory_order_release);
    return true;
  }

  alignas(64) std::atomic<uint64_t> keys_[kSize] = {};
  Value values_[kSize];
};

}  // namespace meridian

#endif  // MERIDIAN_CAPTURE_PROBE_HANDLE_TABLE_H_
