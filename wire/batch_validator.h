// BatchValidator: makes a Batch from an agent safe to store, or refuses it.
//
// Contract: ValidateBatch() never trusts the batch. What one traced process
// can get wrong costs only its own spans:
//   - every string is made valid UTF-8 (ill-formed sequences replaced by
//     U+FFFD) and cut to kMaxStringBytes on a character boundary, in place;
//   - a span that breaks a rule of wire/span_rules.h, names a string that
//     does not exist or is over kMaxStringBytes, or has an arg that is not
//     finite or has no key, is dropped (from the message spans and from its
//     decoded chunk) and counted in BatchRepairs, with the first one's
//     place and reason.
// What only a broken or hostile agent can produce refuses the whole batch:
// INVALID_ARGUMENT with a message that names the batch (agent and sequence
// number), the element and the field, and says what is allowed:
//   - agent_id: 1..256 bytes; batch_seq >= 1; strings[0] is "".
//   (How many elements a batch may hold is checked before it is parsed:
//   wire/batch_shape.h.)
//   - every index (process, track) refers to an existing entry; job names
//     are not empty.
//   - a chunk names an existing track, decodes (wire/span_chunk.h: the
//     message names the column that does not), holds `count` spans whose
//     earliest start is first_start_ns.
//   - a ring range has begin <= end; a chunk's ring names one, and each of
//     its spans' records lies inside it.
//   - op and process totals name an existing process; op totals name an
//     operation of category MPI or NCCL; counts, bytes and times are
//     0..2^53;
//     size buckets ascend in log2 -1..62 and hold no more calls than their
//     operation.
//   - a clock model, if any field is set, names its node (a non-empty
//     string), has reference_ns within the timestamp range, uncertainty_ns
//     >= 0 and |drift_ppb| <= kMaxDriftPpb.
// Safe to call from any thread on different batches.
#ifndef MERIDIAN_WIRE_BATCH_VALIDATOR_H_
#define MERIDIAN_WIRE_BATCH_VALIDATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "meridian/v1/span.pb.h"
#include "wire/span_chunk.h"
#include "wire/span_rules.h"

namespace meridian {

inline constexpr size_t kMaxAgentIdBytes = 256;
inline constexpr int64_t kMaxDriftPpb = 1000000;

// What ValidateBatch changed in a batch it accepted.
struct BatchRepairs {
  uint64_t spans_dropped = 0;
  uint64_t strings_repaired = 0;  // made valid UTF-8 or cut
  std::string first_problem;      // the first dropped span: where and why
};

// `decoded` receives chunk i of the batch decoded at [i], without its
// dropped spans: the store writes those columns, so no chunk is decoded
// twice (and nothing is read again after its check).
absl::Status ValidateBatch(v1::Batch* batch, std::vector<SpanColumns>* decoded,
                           BatchRepairs* repairs);

// Whether the batch carries a clock model (any of its fields set).
bool HasClockModel(const v1::Batch& batch);

}  // namespace meridian

#endif  // MERIDIAN_WIRE_BATCH_VALIDATOR_H_
