#include "testing/synthetic_store.h"

#include <utility>
#include <vector>

namespace meridian {

absl::StatusOr<int64_t> WriteSyntheticJob(const SyntheticJob& job,
                                          Store& store) {
  constexpr size_t kBatchesPerWrite = 64;
  std::vector<v1::Batch> batches;
  absl::Status written;
  int64_t spans = 0;
  const auto flush = [&] {
    std::vector<const v1::Batch*> group;
    for (const v1::Batch& batch : batches) group.push_back(&batch);
    auto results = store.Write(group);
    batches.clear();
    if (!results.ok()) {
      written = results.status();
      return;
    }
    for (const BatchWriteResult& result : *results) {
      spans += result.spans_stored;
    }
  };
  for (int node = 0; node < job.nodes && written.ok(); ++node) {
    ForEachSyntheticBatch(job, node, [&](v1::Batch batch) {
      if (!written.ok()) return;
      batches.push_back(std::move(batch));
      if (batches.size() == kBatchesPerWrite) flush();
    });
  }
  if (!batches.empty() && written.ok()) flush();
  if (!written.ok()) return written;
  return spans;
}

}  // namespace meridian
