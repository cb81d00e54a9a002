// HandleTable: a fixed-size, lock-free map from an opaque handle (an MPI
// communicator or request, as an integer) to a small value, for the probe's
// event path.
//
// Each key hashes to a window of kProbe consecutive slots; Insert takes the
// first free slot of the window (or the key's own), Take and Find look only
// there. So every operation costs at most kProbe slot reads, however long the
// program runs, and a table whose window is full refuses the insert (the
// caller counts it) instead of growing. A slot is claimed with a
// compare-and-swap on its key, filled, then published; Take frees it.
//
// Thread-safe for distinct keys; one key is used by one thread at a time
// (an MPI request is completed once, a communicator freed once). Values are
// trivially copyable.
#ifndef MERIDIAN_AGENT_PROBE_HANDLE_TABLE_H_
#define MERIDIAN_AGENT_PROBE_HANDLE_TABLE_H_

#include <atomic>
#include <cstdint>
#include <type_traits>

namespace meridian {

template <typename Value, uint32_t kSize, uint32_t kProbe = 16>
class HandleTable {
  static_assert((kSize & (kSize - 1)) == 0 && kProbe <= kSize);
  static_assert(std::is_trivially_copyable_v<Value>);

 public:
  // Stores `value` for `key` (non-zero), replacing an older value of the
  // same key. False if the key's window is full.
  bool Insert(uint64_t key, const Value& value) {
    const uint32_t home = Home(key);
    for (uint32_t i = 0; i < kProbe; ++i) {
      Slot& slot = slots_[(home + i) & (kSize - 1)];
      if (slot.state.load(std::memory_order_acquire) == key) {
        slot.value = value;
        return true;
      }
    }
    for (uint32_t i = 0; i < kProbe; ++i) {
      Slot& slot = slots_[(home + i) & (kSize - 1)];
      uint64_t expected = kFree;
      if (slot.state.compare_exchange_strong(expected, kBusy,
                                             std::memory_order_acquire)) {
        slot.value = value;
        slot.state.store(key, std::memory_order_release);
        return true;
      }
    }
    return false;
  }

  // The value of `key`, or nullptr. The pointer stays valid until the key
  // is taken.
  Value* Find(uint64_t key) {
    const uint32_t home = Home(key);
    for (uint32_t i = 0; i < kProbe; ++i) {
      Slot& slot = slots_[(home + i) & (kSize - 1)];
      if (slot.state.load(std::memory_order_acquire) == key) return &slot.value;
    }
    return nullptr;
  }

  // Removes `key`, copying its value to `out`; false if absent.
  bool Take(uint64_t key, Value* out) {
    const uint32_t home = Home(key);
    for (uint32_t i = 0; i < kProbe; ++i) {
      Slot& slot = slots_[(home + i) & (kSize - 1)];
      if (slot.state.load(std::memory_order_acquire) == key) {
        if (out != nullptr) *out = slot.value;
        slot.state.store(kFree, std::memory_order_release);
        return true;
      }
    }
    return false;
  }

 private:
  static constexpr uint64_t kFree = 0;
  static constexpr uint64_t kBusy = ~0ULL;  // being filled

  struct Slot {
    std::atomic<uint64_t> state{kFree};  // kFree, kBusy or the key
    Value value;
  };

  static uint32_t Home(uint64_t key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return static_cast<uint32_t>(key) & (kSize - 1);
  }

  Slot slots_[kSize];
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_PROBE_HANDLE_TABLE_H_
