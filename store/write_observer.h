// WriteObserver: what a store tells of its writes as it makes them, so that
// the collector can keep what it derives from the spans (the clocks'
// evidence, query/clocks/evidence_log.h) from the columns ingest already
// decoded, instead of reading, decompressing and decoding the chunks again.
//
// Contract (Store::Observe): every call comes from the thread that writes,
// inside a write. A write's calls run in this order: for each batch,
// Strings, then Operation and Chunk calls for its spans; then Committed if
// the write's transaction committed, or RolledBack if it did not (nothing
// of it is stored, and the ids it named may name other things later).
// Deleted comes before a job's deletion. A store that tells nothing (the
// ClickHouse store) never calls.
#ifndef MERIDIAN_STORE_WRITE_OBSERVER_H_
#define MERIDIAN_STORE_WRITE_OBSERVER_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "meridian/v1/span.pb.h"
#include "wire/span_chunk.h"

namespace meridian {

class WriteObserver {
 public:
  virtual ~WriteObserver() = default;
  // The batch being written: string_id[i] is the store's id of
  // batch.strings(i). Both outlive the batch's Operation and Chunk calls.
  virtual void Strings(const v1::Batch& batch,
                       const std::vector<int64_t>& string_id) = 0;
  // The store's operation `op_id` is (category, name): told in each batch
  // before the chunks that name it.
  virtual void Operation(int64_t op_id, v1::Category category,
                         absl::string_view name) = 0;
  // A chunk written: store id `chunk_id` (ascending), of job `job_id`'s
  // track `track_id`, its spans as stored (absolute times, ascending start;
  // `name` the operation's store id; args' keys and string values the
  // store's string ids, all of the batch told by Strings).
  virtual void Chunk(int64_t job_id, int64_t track_id, int64_t chunk_id,
                     const SpanColumns& spans) = 0;
  virtual void Committed() = 0;
  virtual void RolledBack() = 0;
  virtual void Deleted(int64_t job_id) = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_STORE_WRITE_OBSERVER_H_
