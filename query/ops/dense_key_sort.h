// SortByDenseKeys: MpiMatching's sort of collectives by instance where
// they are far from that order (many ranks' members interleaved), linear
// where their keys are dense. Collective has comm, seq (unsigned), rank
// (int32_t) and an operator< by (comm, seq, rank, index).
#ifndef MERIDIAN_QUERY_OPS_DENSE_KEY_SORT_H_
#define MERIDIAN_QUERY_OPS_DENSE_KEY_SORT_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace meridian {

// Sorts `collective` by operator< with two stable counting sorts, by rank,
// then by (comm, seq): spans of one rank in one instance keep their order,
// which is by index (MpiMatching adds them so, and SortByInstance's
// insertion pass keeps it). Only where both keys are dense (their ranges at
// most a few times the spans: the seqs of a job or a window of it, its
// ranks); false, leaving `collective` alone, otherwise.
template <typename Collective>
bool SortByDenseKeys(std::vector<Collective>* collective) {
  std::vector<Collective>& c = *collective;
  const size_t n = c.size();
  const uint64_t limit = 4 * static_cast<uint64_t>(n) + 64;
  if (n < 2 || n > std::numeric_limits<uint32_t>::max() / 8) return false;
  // Each communicator's seq range; the ranks' range.
  struct Range {
    uint64_t lo = std::numeric_limits<uint64_t>::max();
    uint64_t hi = 0;
    uint64_t base = 0;
  };
  absl::flat_hash_map<uint64_t, uint32_t> slot_of;
  std::vector<std::pair<uint64_t, Range>> comms;  // by slot
  std::vector<uint32_t> slot(n);
  int32_t rank_lo = std::numeric_limits<int32_t>::max();
  int32_t rank_hi = std::numeric_limits<int32_t>::min();
  uint64_t last_comm = 0;
  uint32_t last_slot = std::numeric_limits<uint32_t>::max();
  for (size_t i = 0; i < n; ++i) {
    if (last_slot == std::numeric_limits<uint32_t>::max() ||
        c[i].comm != last_comm) {
      auto [it, added] =
          slot_of.try_emplace(c[i].comm, static_cast<uint32_t>(comms.size()));
      if (added) comms.push_back({c[i].comm, Range{}});
      last_comm = c[i].comm;
      last_slot = it->second;
    }
    slot[i] = last_slot;
    Range& r = comms[last_slot].second;
    r.lo = std::min(r.lo, c[i].seq);
    r.hi = std::max(r.hi, c[i].seq);
    rank_lo = std::min(rank_lo, c[i].rank);
    rank_hi = std::max(rank_hi, c[i].rank);
  }
  const uint64_t ranks =
      static_cast<uint64_t>(static_cast<int64_t>(rank_hi) - rank_lo) + 1;
  if (ranks > limit) return false;
  // The (comm, seq) keys: communicators ascending, each one's seqs after.
  std::vector<uint32_t> by_comm(comms.size());
  for (uint32_t k = 0; k < by_comm.size(); ++k) by_comm[k] = k;
  std::sort(by_comm.begin(), by_comm.end(), [&](uint32_t a, uint32_t b) {
    return comms[a].first < comms[b].first;
  });
  uint64_t keys = 0;
  for (uint32_t k : by_comm) {
    Range& r = comms[k].second;
    const uint64_t width = r.hi - r.lo;  // hi >= lo: every slot has a span
    if (width >= limit || keys + width + 1 > limit) return false;
    r.base = keys;
    keys += width + 1;
  }
  std::vector<uint32_t> key(n);
  for (size_t i = 0; i < n; ++i) {
    const Range& r = comms[slot[i]].second;
    key[i] = static_cast<uint32_t>(r.base + (c[i].seq - r.lo));
  }
  // Stable counting sorts of positions: by rank, then by key.
  std::vector<uint32_t> count(std::max(ranks, keys) + 1);
  std::vector<uint32_t> by_rank(n), order(n);
  const auto rank_of = [&](size_t i) {
    return static_cast<size_t>(int64_t{c[i].rank} - rank_lo);
  };
  for (size_t i = 0; i < n; ++i) ++count[rank_of(i) + 1];
  for (size_t k = 1; k <= ranks; ++k) count[k] += count[k - 1];
  for (size_t i = 0; i < n; ++i) {
    by_rank[count[rank_of(i)]++] = static_cast<uint32_t>(i);
  }
  std::fill(count.begin(), count.end(), 0);
  for (size_t i = 0; i < n; ++i) ++count[key[i] + 1];
  for (size_t k = 1; k <= keys; ++k) count[k] += count[k - 1];
  for (uint32_t i : by_rank) order[count[key[i]]++] = i;
  std::vector<Collective> sorted;
  sorted.reserve(n);
  for (uint32_t i : order) sorted.push_back(c[i]);
  c = std::move(sorted);
  return true;
}

}  // namespace meridian

#endif  // MERIDIAN_QUERY_OPS_DENSE_KEY_SORT_H_
