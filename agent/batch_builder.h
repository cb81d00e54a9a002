// BatchBuilder: assembles self-contained v1::Batch messages with interned
// strings, the way agents send them.
//
// Processes and tracks are declared once and referred to by handle; each
// batch carries only the strings, processes and tracks its spans use, so
// batches can be resent or spooled independently. Batches are numbered
// batch_seq = first_seq, first_seq + 1, ... in the order Take() returns them.
// Not thread-safe.
#ifndef MERIDIAN_AGENT_BATCH_BUILDER_H_
#define MERIDIAN_AGENT_BATCH_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "meridian/v1/span.pb.h"

namespace meridian {

struct ProcessDesc {
  std::string job;
  std::string node;
  int32_t rank = -1;
  int32_t local_rank = -1;
  int64_t pid = 0;
};

class BatchBuilder {
 public:
  explicit BatchBuilder(std::string agent_id, uint64_t first_seq = 1);

  int DeclareProcess(const ProcessDesc& process);
  int DeclareTrack(int process, v1::TrackKind kind, int64_t id,
                   std::string name);

  // Adds a span to the current batch and returns it, for optional fields;
  // the pointer is valid until the next AddSpan or Take. Use String() for
  // the string indexes of args.
  v1::Span* AddSpan(int track, v1::Category category, absl::string_view name,
                    int64_t start_ns, int64_t dur_ns);
  uint32_t String(absl::string_view s);

  size_t spans() const { return batch_.spans_size(); }
  // Returns the current batch and starts the next one.
  v1::Batch Take();

 private:
  struct TrackDesc {
    int process;
    v1::TrackKind kind;
    int64_t id;
    std::string name;
  };
  uint32_t TrackIndex(int track);
  void Reset();

  const std::string agent_id_;
  uint64_t next_seq_;
  std::vector<ProcessDesc> processes_;
  std::vector<TrackDesc> tracks_;
  v1::Batch batch_;
  absl::flat_hash_map<std::string, uint32_t> string_index_;
  std::vector<int> process_index_;  // by handle; -1: not in this batch
  std::vector<int> track_index_;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_BATCH_BUILDER_H_
