// BatchBuilder: assembles self-contained v1::Batch messages with interned
// strings, the way agents send them.
//
// Spans are added in one of two forms. AddColumnSpan (the agent's path)
// appends to the columns of one (track, ring range): Take() encodes each as
// a SpanChunk (wire/span_chunk.h), so no message is built per span.
// AddSpan adds a v1::Span message (tests, synthetic jobs, tools).
//
// Processes and tracks are declared once and referred to by handle; each
// batch carries only the strings, processes and tracks its spans use, so
// batches can be resent or spooled independently. Batches are numbered
// batch_seq = first_seq, first_seq + 1, ... in the order Take() returns them.
// Not thread-safe.
#ifndef MERIDIAN_WIRE_BATCH_BUILDER_H_
#define MERIDIAN_WIRE_BATCH_BUILDER_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "meridian/v1/span.pb.h"
#include "wire/span_chunk.h"

namespace meridian {

struct ProcessDesc {
  std::string job;
  std::string node;
  int32_t rank = -1;
  int32_t local_rank = -1;
  int64_t pid = 0;
  int32_t world_size = 0;    // 0: unknown
  uint64_t dropped = 0;      // v1::Process.dropped
  uint64_t incarnation = 0;  // v1::Process.incarnation (0: not known)
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

  // Statistics another tool measured for `process` (Batch.op_totals and
  // process_totals), returned for their counts and sizes; valid until the
  // next Add*Totals or Take.
  v1::ImportedOpTotals* AddOpTotals(int process, v1::Category category,
                                    absl::string_view name);
  v1::ImportedProcessTotals* AddProcessTotals(int process,
                                              absl::string_view source);

  // Puts `process` in the current batch, marked as ended
  // (v1::Process.ended): call once every record of it is in this batch or
  // an earlier one.
  void MarkEnded(int process);

  // Declares that the following column spans come from ring `ring` of the
  // process region `incarnation`, records [begin, ...); returns its handle.
  // SetRingEnd gives the end once the records are read.
  int AddRing(uint64_t incarnation, uint32_t ring, uint64_t begin);
  void SetRingEnd(int handle, uint64_t end);

  // A span in columns: set optional fields at columns->...[index]; add args
  // with columns->AddArg (key and string values from String()). `ring` is a
  // handle from AddRing, or -1; `record` the span's record index in it.
  struct ColumnSpan {
    SpanColumns* columns;
    size_t index;
  };
  ColumnSpan AddColumnSpan(int track, int ring, uint64_t record,
                           v1::Category category, absl::string_view name,
                           int64_t start_ns, int64_t dur_ns);

  size_t spans() const { return batch_.spans_size() + column_spans_; }
  // What the current batch holds of what wire/batch_shape.h bounds.
  size_t strings() const { return static_cast<size_t>(batch_.strings_size()); }
  size_t processes() const {
    return static_cast<size_t>(batch_.processes_size());
  }
  size_t tracks() const { return static_cast<size_t>(batch_.tracks_size()); }
  size_t totals() const {
    return static_cast<size_t>(batch_.op_totals_size() +
                               batch_.process_totals_size());
  }
  // Returns the current batch and starts the next one.
  v1::Batch Take();

  // Forgets every process and track declared so far, so that a long-lived
  // builder (the agent's) holds only what its current batch uses: handles
  // from before are invalid, and declarations() changes. Call between
  // Take() and the next Add*.
  void ForgetDeclarations();
  // Changes at each ForgetDeclarations: a holder of handles declared under
  // another value declares again.
  uint64_t declarations() const { return declarations_; }
  // Processes and tracks declared and not forgotten.
  size_t declared() const { return processes_.size() + tracks_.size(); }

 private:
  struct TrackDesc {
    int process;
    v1::TrackKind kind;
    int64_t id;
    std::string name;
  };
  uint32_t ProcessIndex(int process);
  uint32_t TrackIndex(int track);
  void Reset();
  void EncodeChunks();

  const std::string agent_id_;
  uint64_t next_seq_;
  uint64_t declarations_ = 0;
  std::vector<ProcessDesc> processes_;
  std::vector<TrackDesc> tracks_;
  v1::Batch batch_;
  absl::flat_hash_map<std::string, uint32_t> string_index_;
  std::vector<int> process_index_;  // by handle; -1: not in this batch
  std::vector<int> track_index_;
  // Column spans of this batch, by (batch track index, ring handle).
  std::map<std::pair<uint32_t, int>, SpanColumns> columns_;
  size_t column_spans_ = 0;
};

// The same batch with its span messages moved into chunks, one per track,
// as an agent sends them (for synthetic jobs, tools and tests).
v1::Batch ToChunks(v1::Batch batch);

}  // namespace meridian

#endif  // MERIDIAN_WIRE_BATCH_BUILDER_H_
