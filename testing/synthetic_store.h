// WriteSyntheticJob: a synthetic job (testing/synthetic_job.h) written
// straight into a store, as the collector's writer would store what its
// agents send, for benchmarks of jobs too large to send from memory.
#ifndef MERIDIAN_TESTING_SYNTHETIC_STORE_H_
#define MERIDIAN_TESTING_SYNTHETIC_STORE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "store/store.h"
#include "testing/synthetic_job.h"

namespace meridian {

// Writes every node's batches of `job` into `store`, 64 batches a
// transaction, made as they are written: memory for 64 batches whatever the
// job's size. Returns the spans stored; the store's error if a write fails
// (the transactions before it stay).
absl::StatusOr<int64_t> WriteSyntheticJob(const SyntheticJob& job,
                                          Store& store);

}  // namespace meridian

#endif  // MERIDIAN_TESTING_SYNTHETIC_STORE_H_
