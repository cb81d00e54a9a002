// LruCache: a map of at most `capacity` entries that, when full, forgets
// the entry used longest ago. For the collector's id caches (strings, jobs,
// processes, tracks, operations), so that what a client sends cannot grow
// them without bound (5 M unique strings used to cost 1.86 GB).
//
// Find and Insert are O(1) on average. Not thread-safe.
//
// Example, capacity 2: Insert(a), Insert(b), Find(a), Insert(c) forgets b,
// the least recently used; a and c remain.
#ifndef MERIDIAN_COMMON_LRU_CACHE_H_
#define MERIDIAN_COMMON_LRU_CACHE_H_

#include <cstddef>
#include <list>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace meridian {

template <typename Key, typename Value>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // The value of `key`, now the most recently used; null if absent.
  const Value* Find(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }

  // Sets `key` to `value` (most recently used), forgetting the least
  // recently used entry if the cache is full.
  void Insert(const Key& key, Value value) {
    auto it = index_.find(key);
    if (it != index_.end()) {
      it->second->second = std::move(value);
      order_.splice(order_.begin(), order_, it->second);
      return;
    }
    if (index_.size() == capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    order_.emplace_front(key, std::move(value));
    index_.emplace(key, order_.begin());
  }

  size_t size() const { return index_.size(); }

 private:
  using Entry = std::pair<Key, Value>;
  const size_t capacity_;
  std::list<Entry> order_;  // most recently used first
  absl::flat_hash_map<Key, typename std::list<Entry>::iterator> index_;
};

}  // namespace meridian

#endif  // MERIDIAN_COMMON_LRU_CACHE_H_
