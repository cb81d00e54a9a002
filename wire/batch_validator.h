// BatchValidator: checks that a Batch from an agent is well formed before
// anything of it reaches the store.
//
// Contract: ValidateBatch() returns OK or INVALID_ARGUMENT with a message that
// names the batch (agent and sequence number), the element (span index and
// name) and the field that is wrong, and says what is allowed. It never
// modifies the batch and is safe to call from any thread.
//
// Limits (also in docs/wire-and-store.md):
//   - agent_id: 1..256 bytes; batch_seq >= 1.
//   - strings: entry 0 is ""; each string at most kMaxStringBytes.
//   - every index (string, process, track) refers to an existing entry;
//     job and span names are not empty.
//   - start_ns within [kMinTimestampNs, kMaxTimestampNs] (years 2000..2100 in
//     Unix-epoch ns); 0 <= dur_ns <= kMaxDurationNs (30 days);
//     start_ns + dur_ns <= kMaxTimestampNs; bytes >= 0.
//   - enums hold known values; counter values and real args are finite.
//   - a chunk names an existing track, decodes (wire/span_chunk.h: the
//     message names the column that does not), holds `count` spans whose
//     earliest start is first_start_ns, and each of its spans obeys the
//     rules above; the message names the chunk, the span and the field.
//   - a ring range has begin <= end; a chunk's ring names one, and each of
//     its spans' records lies inside it.
//   - a clock model, if any field is set, names its node (a non-empty
//     string), has reference_ns within the timestamp range, uncertainty_ns
//     >= 0 and |drift_ppb| <= kMaxDriftPpb.
#ifndef MERIDIAN_COLLECTOR_BATCH_VALIDATOR_H_
#define MERIDIAN_COLLECTOR_BATCH_VALIDATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "meridian/v1/span.pb.h"
#include "wire/span_chunk.h"

namespace meridian {

inline constexpr int64_t kMinTimestampNs = 946684800LL * 1000000000LL;
inline constexpr int64_t kMaxTimestampNs = 4102444800LL * 1000000000LL;
inline constexpr int64_t kMaxDurationNs = 30LL * 24 * 3600 * 1000000000LL;
inline constexpr size_t kMaxStringBytes = 64 * 1024;
inline constexpr size_t kMaxAgentIdBytes = 256;
inline constexpr int64_t kMaxDriftPpb = 1000000;

// `decoded`, if given, receives chunk i of the batch decoded at [i], as it
// was checked: the store writes those columns, so no chunk is decoded twice
// (and nothing is read again after its check).
absl::Status ValidateBatch(const v1::Batch& batch,
                           std::vector<SpanColumns>* decoded = nullptr);

// Whether the batch carries a clock model (any of its fields set).
bool HasClockModel(const v1::Batch& batch);

}  // namespace meridian

#endif  // MERIDIAN_COLLECTOR_BATCH_VALIDATOR_H_
