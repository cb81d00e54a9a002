// ClockSolveState: what JobClocks::Update keeps of a job's clock solve
// between updates, so that the next update places and matches only the
// evidence that is still open, not the whole job's (docs/clocks.md,
// "Incremental updates").
//
// The evidence (clock_evidence.h) is split in two:
//   - settled: the groups of every collective instance, and of every
//     matched message, all of whose spans ended before their track's
//     horizon (SettledGroups: compact, placed, matched once);
//   - open: every other span, raw, matched again with the next update's.
// A track's horizon is the earlier of its node's last clock model's
// reference (a model that arrives later, with a later reference, moves only
// times after that) and the track's latest evidence start less
// `settle_margin_ns` (spans are written when they end: one still running
// then starts before that). It only grows.
//
// The next update trusts the state only if nothing it assumed has moved:
// the same nodes; each node's models those it solved with, plus models with
// later references; the stored solution the one it made; every new
// evidence span starting at or after its
// track's horizon; no new span joining a closed collective instance; and
// no new send or receive starting before one already settled in its
// channel (comm, source, destination, tag), which pairs in order of start.
// Otherwise it solves from all the job's chunks and makes the state
// again. Either way the solution is the same, byte for byte.
#ifndef MERIDIAN_QUERY_CLOCKS_CLOCK_SOLVE_STATE_H_
#define MERIDIAN_QUERY_CLOCKS_CLOCK_SOLVE_STATE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "query/clocks/clock_evidence.h"
#include "query/clocks/settled_groups.h"
#include "store/store.h"

namespace meridian {

struct ClockSolveState {
  // How long before a node's latest evidence start its spans settle.
  int64_t settle_margin_ns = 10'000'000'000;

  // Set by JobClocks::Update; `job_id` -1: empty (the next update solves
  // whole, from the job's chunks).
  int64_t job_id = -1;
  std::vector<std::string> nodes;
  std::vector<std::vector<NodeClockModel>> models;     // per node, as solved
  absl::flat_hash_map<int64_t, int64_t> horizon;       // track -> raw ns
  absl::flat_hash_map<int64_t, int64_t> latest_start;  // track -> raw ns
  // Per channel (comm, source, destination, tag): the latest start of a
  // settled send and of a settled receive (raw: each on one rank's node).
  using Channel = std::tuple<uint64_t, int32_t, int32_t, int32_t>;
  absl::flat_hash_map<Channel, std::pair<int64_t, int64_t>> channels;
  SettledGroups settled;
  int64_t settled_spans = 0;       // in settled groups, or never matched
  std::vector<EvidenceSpan> open;  // ascending (start, track)
  absl::flat_hash_map<int64_t, int64_t> first_start;  // track -> raw ns
  int64_t mark = 0;    // Store::WriteMark up to which the chunks were read
  int64_t chunks = 0;  // the job's chunks up to `mark` (its catalog's count)
  std::optional<StoredJobResult> solution;  // the last one made
  // Updates that used the state, and solves that made it again.
  int64_t incremental_updates = 0;
  int64_t full_solves = 0;

  // Forgets the job (the counters stay).
  void Clear();
  // Bytes held, about.
  int64_t MemoryBytes() const;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_CLOCKS_CLOCK_SOLVE_STATE_H_
