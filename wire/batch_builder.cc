#include "wire/batch_builder.h"

#include <algorithm>
#include <utility>

#include "common/utf8.h"
#include "wire/batch_spans.h"

namespace meridian {

BatchBuilder::BatchBuilder(std::string agent_id, uint64_t first_seq)
    : agent_id_(std::move(agent_id)), next_seq_(first_seq) {
  Reset();
}

void BatchBuilder::Reset() {
  batch_.Clear();
  columns_.clear();
  column_spans_ = 0;
  string_index_.clear();
  process_index_.assign(processes_.size(), -1);
  track_index_.assign(tracks_.size(), -1);
  String("");  // index 0 is always ""
}

void BatchBuilder::ForgetDeclarations() {
  processes_.clear();
  processes_.shrink_to_fit();
  tracks_.clear();
  tracks_.shrink_to_fit();
  process_index_.clear();
  process_index_.shrink_to_fit();
  track_index_.clear();
  track_index_.shrink_to_fit();
  ++declarations_;
}

int BatchBuilder::DeclareProcess(const ProcessDesc& process) {
  processes_.push_back(process);
  process_index_.push_back(-1);
  return static_cast<int>(processes_.size()) - 1;
}

int BatchBuilder::DeclareTrack(int process, v1::TrackKind kind, int64_t id,
                               std::string name) {
  tracks_.push_back({process, kind, id, std::move(name)});
  track_index_.push_back(-1);
  return static_cast<int>(tracks_.size()) - 1;
}

uint32_t BatchBuilder::String(absl::string_view s) {
  auto it = string_index_.find(s);
  if (it != string_index_.end()) return it->second;
  uint32_t index = batch_.strings_size();
  // Whatever a traced process wrote, the batch carries valid UTF-8.
  const std::string_view bytes(s.data(), s.size());
  batch_.add_strings(IsValidUtf8(bytes) ? std::string(s) : RepairUtf8(bytes));
  string_index_.emplace(std::string(s), index);
  return index;
}

uint32_t BatchBuilder::ProcessIndex(int process) {
  if (process_index_[process] >= 0) return process_index_[process];
  const ProcessDesc& p = processes_[process];
  v1::Process* out = batch_.add_processes();
  out->set_job(String(p.job));
  out->set_node(String(p.node));
  out->set_rank(p.rank);
  out->set_local_rank(p.local_rank);
  out->set_world_size(p.world_size);
  out->set_dropped(p.dropped);
  out->set_pid(p.pid);
  out->set_incarnation(p.incarnation);
  process_index_[process] = batch_.processes_size() - 1;
  return process_index_[process];
}

void BatchBuilder::MarkEnded(int process) {
  batch_.mutable_processes(static_cast<int>(ProcessIndex(process)))
      ->set_ended(true);
}

uint32_t BatchBuilder::TrackIndex(int track) {
  if (track_index_[track] >= 0) return track_index_[track];
  const TrackDesc& desc = tracks_[track];
  const uint32_t process = ProcessIndex(desc.process);
  v1::Track* out = batch_.add_tracks();
  out->set_process(process);
  out->set_kind(desc.kind);
  out->set_id(desc.id);
  out->set_name(String(desc.name));
  track_index_[track] = batch_.tracks_size() - 1;
  return track_index_[track];
}

v1::Span* BatchBuilder::AddSpan(int track, v1::Category category,
                                absl::string_view name, int64_t start_ns,
                                int64_t dur_ns) {
  v1::Span* span = batch_.add_spans();
  span->set_track(TrackIndex(track));
  span->set_category(category);
  span->set_name(String(name));
  span->set_start_ns(start_ns);
  span->set_dur_ns(dur_ns);
  return span;
}

v1::ImportedOpTotals* BatchBuilder::AddOpTotals(int process,
                                                v1::Category category,
                                                absl::string_view name) {
  const uint32_t index = ProcessIndex(process);
  const uint32_t name_index = String(name);
  v1::ImportedOpTotals* op = batch_.add_op_totals();
  op->set_process(index);
  op->set_category(category);
  op->set_name(name_index);
  return op;
}

v1::ImportedProcessTotals* BatchBuilder::AddProcessTotals(
    int process, absl::string_view source) {
  const uint32_t index = ProcessIndex(process);
  const uint32_t source_index = String(source);
  v1::ImportedProcessTotals* totals = batch_.add_process_totals();
  totals->set_process(index);
  totals->set_source(source_index);
  return totals;
}

int BatchBuilder::AddRing(uint64_t incarnation, uint32_t ring, uint64_t begin) {
  v1::RingRange* range = batch_.add_rings();
  range->set_incarnation(incarnation);
  range->set_ring(ring);
  range->set_begin(begin);
  range->set_end(begin);
  return batch_.rings_size() - 1;
}

void BatchBuilder::SetRingEnd(int handle, uint64_t end) {
  batch_.mutable_rings(handle)->set_end(end);
}

BatchBuilder::ColumnSpan BatchBuilder::AddColumnSpan(
    int track, int ring, uint64_t record, v1::Category category,
    absl::string_view name, int64_t start_ns, int64_t dur_ns) {
  SpanColumns& columns = columns_[{TrackIndex(track), ring}];
  const size_t index = columns.Add(start_ns, dur_ns, String(name), category, 0);
  columns.record[index] = record;
  ++column_spans_;
  return {&columns, index};
}

// Each (track, ring) becomes chunks of at most kMaxChunkSpans spans.
void BatchBuilder::EncodeChunks() {
  SpanColumns piece;
  for (auto& [key, columns] : columns_) {
    for (size_t begin = 0; begin < columns.size(); begin += kMaxChunkSpans) {
      const size_t end = std::min(columns.size(), begin + kMaxChunkSpans);
      const SpanColumns* spans = &columns;
      if (begin != 0 || end != columns.size()) {
        piece.Clear();
        for (size_t i = begin; i < end; ++i) piece.AppendFrom(columns, i);
        spans = &piece;
      }
      auto data = EncodeSpanChunk(*spans);
      if (!data.ok()) continue;  // cannot happen: 1..kMaxChunkSpans spans
      v1::SpanChunk* chunk = batch_.add_chunks();
      chunk->set_track(key.first);
      chunk->set_ring(key.second + 1);
      chunk->set_count(static_cast<uint32_t>(spans->size()));
      chunk->set_first_start_ns(
          *std::min_element(spans->start_ns.begin(), spans->start_ns.end()));
      chunk->set_data(std::move(*data));
    }
  }
}

v1::Batch BatchBuilder::Take() {
  EncodeChunks();
  batch_.set_agent_id(agent_id_);
  batch_.set_batch_seq(next_seq_++);
  v1::Batch out = std::move(batch_);
  Reset();
  return out;
}

v1::Batch ToChunks(v1::Batch batch) {
  std::map<uint32_t, SpanColumns> by_track;
  for (const v1::Span& span : batch.spans()) {
    AppendSpanMessage(span, &by_track[span.track()]);
  }
  batch.clear_spans();
  SpanColumns piece;
  for (auto& [track, columns] : by_track) {
    for (size_t begin = 0; begin < columns.size(); begin += kMaxChunkSpans) {
      const size_t end = std::min(columns.size(), begin + kMaxChunkSpans);
      piece.Clear();
      for (size_t i = begin; i < end; ++i) piece.AppendFrom(columns, i);
      auto data = EncodeSpanChunk(piece);
      if (!data.ok()) continue;  // cannot happen: 1..kMaxChunkSpans spans
      v1::SpanChunk* chunk = batch.add_chunks();
      chunk->set_track(track);
      chunk->set_count(static_cast<uint32_t>(piece.size()));
      chunk->set_first_start_ns(
          *std::min_element(piece.start_ns.begin(), piece.start_ns.end()));
      chunk->set_data(std::move(*data));
    }
  }
  return batch;
}

}  // namespace meridian
