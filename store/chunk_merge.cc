#include "store/chunk_merge.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"

namespace meridian {
namespace {

// Span i's args: ArgsOf, with the chunk's strings or the store's.
absl::Status ToStoredArgs(ChunkSource* source, const MergeChunk& chunk,
                          size_t i, std::vector<StoredArg>* out) {
  return ArgsOf(
      chunk.spans, i,
      [&](int64_t id, std::string* to) -> absl::Status {
        if (chunk.strings.empty()) {
          auto looked_up = source->LookupString(id);
          if (!looked_up.ok()) return looked_up.status();
          *to = std::move(*looked_up);
          return absl::OkStatus();
        }
        if (id < 0 || static_cast<size_t>(id) >= chunk.strings.size()) {
          return absl::DataLossError("a chunk's arg names a string it lacks");
        }
        to->assign(chunk.strings[id]);
        return absl::OkStatus();
      },
      out);
}

}  // namespace

void SpanFromColumns(const SpanColumns& s, size_t i, StoredSpan* span) {
  const uint8_t f = s.flags[i];
  span->start_ns = s.start_ns[i];
  span->dur_ns = s.dur_ns[i];
  span->bytes = s.bytes[i];
  span->peer = f & SpanColumns::kHasPeer ? std::optional<int32_t>(s.peer[i])
                                         : std::nullopt;
  span->tag = f & SpanColumns::kHasTag ? std::optional<int32_t>(s.tag[i])
                                       : std::nullopt;
  span->comm = s.comm[i];
  span->comm_size = s.comm_size[i];
  span->seq = f & SpanColumns::kHasSeq ? std::optional<uint64_t>(s.seq[i])
                                       : std::nullopt;
  span->step = f & SpanColumns::kHasStep ? std::optional<int64_t>(s.step[i])
                                         : std::nullopt;
  span->partition = f & SpanColumns::kHasPartition
                        ? std::optional<int32_t>(s.partition[i])
                        : std::nullopt;
  span->correlation = s.correlation[i];
  span->kind = static_cast<v1::SpanKind>(s.kind[i]);
  span->value = s.value[i];
}

absl::Status ArgsOf(
    const SpanColumns& c, size_t i,
    absl::FunctionRef<absl::Status(int64_t id, std::string* to)> text,
    std::vector<StoredArg>* out) {
  const uint32_t begin = i == 0 ? 0 : c.arg_end[i - 1];
  out->resize(c.arg_end[i] - begin);
  for (uint32_t a = begin; a < c.arg_end[i]; ++a) {
    const ChunkArg& arg = c.args[a];
    StoredArg& stored = (*out)[a - begin];
    absl::Status status = text(arg.key, &stored.key);
    if (!status.ok()) return status;
    stored.str.clear();
    stored.int_value = 0;
    stored.real_value = 0;
    switch (arg.type) {
      case ChunkArg::Type::kString:
        stored.type = StoredArg::Type::kString;
        status = text(arg.value, &stored.str);
        if (!status.ok()) return status;
        break;
      case ChunkArg::Type::kInt:
        stored.type = StoredArg::Type::kInt;
        stored.int_value = arg.value;
        break;
      case ChunkArg::Type::kReal:
        stored.type = StoredArg::Type::kReal;
        stored.real_value = arg.real;
        break;
    }
  }
  return absl::OkStatus();
}

absl::Status MergeChunks(ChunkSource* source, const ScanRange& range,
                         int64_t abs_end_lo, int64_t abs_hi,
                         const std::function<bool(const StoredSpan&)>& visit,
                         ScanStats* stats) {
  const bool by_step = range.first_step || range.last_step;
  const int64_t first_step =
      range.first_step.value_or(std::numeric_limits<int64_t>::min());
  const int64_t last_step =
      range.last_step.value_or(std::numeric_limits<int64_t>::max());
  struct Cursor {
    MergeChunk chunk;
    size_t next = 0;
  };
  std::vector<std::unique_ptr<Cursor>> cursors;  // open, and free for reuse
  std::vector<Cursor*> free_cursors;
  // Min-heap on (next start, track, chunk id).
  auto later = [](const Cursor* a, const Cursor* b) {
    const int64_t sa = a->chunk.spans.start_ns[a->next];
    const int64_t sb = b->chunk.spans.start_ns[b->next];
    if (sa != sb) return sa > sb;
    if (a->chunk.track != b->chunk.track)
      return a->chunk.track > b->chunk.track;
    return a->chunk.id > b->chunk.id;
  };
  std::vector<Cursor*> heap;
  const auto wanted = [&](const SpanColumns& s, size_t i) {
    return s.start_ns[i] < abs_hi &&
           s.start_ns[i] + s.dur_ns[i] >= abs_end_lo &&
           (!by_step || ((s.flags[i] & SpanColumns::kHasStep) &&
                         s.step[i] >= first_step && s.step[i] <= last_step));
  };
  // Chunks are decoded here, and only their spans in the range are kept
  // open: a chunk that holds four steps of a track costs one step's memory
  // while a step's scan waits on it, not four (the 100M-span bench's one
  // step decoded 1M spans to keep 257,000).
  MergeChunk decoded;

  StoredSpan span;
  // The next chunk's first start: it changes only when a chunk is taken.
  auto pending = source->PeekFirstStart();
  while (true) {
    while (true) {
      if (!pending.ok()) return pending.status();
      if (!*pending ||
          (!heap.empty() &&
           **pending >
               heap.front()->chunk.spans.start_ns[heap.front()->next])) {
        break;
      }
      auto taken = source->Take(&decoded);
      if (!taken.ok()) return taken.status();
      pending = source->PeekFirstStart();
      if (!*taken) continue;
      const SpanColumns& all = decoded.spans;
      if (stats != nullptr) {
        ++stats->chunks_read;
        stats->chunk_ids.insert(decoded.id);
        stats->spans_decoded += static_cast<int64_t>(all.size());
      }
      size_t kept = 0;
      for (size_t i = 0; i < all.size(); ++i) kept += wanted(all, i);
      if (kept == 0) continue;
      Cursor* c;
      if (free_cursors.empty()) {
        cursors.push_back(std::make_unique<Cursor>());
        c = cursors.back().get();
      } else {
        c = free_cursors.back();
        free_cursors.pop_back();
      }
      if (kept == all.size()) {
        std::swap(c->chunk, decoded);
      } else {
        c->chunk.id = decoded.id;
        c->chunk.track = decoded.track;
        std::swap(c->chunk.op_ids, decoded.op_ids);
        std::swap(c->chunk.strings, decoded.strings);
        c->chunk.spans.Clear();
        for (size_t i = 0; i < all.size(); ++i) {
          if (wanted(all, i)) c->chunk.spans.AppendFrom(all, i);
        }
      }
      c->next = 0;
      heap.push_back(c);
      std::push_heap(heap.begin(), heap.end(), later);
    }
    if (heap.empty()) break;
    Cursor* c = heap.front();
    const SpanColumns& s = c->chunk.spans;
    const size_t i = c->next++;
    if (c->next < s.size()) {
      // Its next span moves the top down to where it belongs: one sift, not
      // a pop and a push (this is the scan's inner loop).
      SiftDown(heap, later);
    } else {
      // Done: the last cursor takes its place (no comparison reads the
      // finished one's key, which is past its end now).
      heap.front() = heap.back();
      heap.pop_back();
      if (!heap.empty()) SiftDown(heap, later);
      free_cursors.push_back(c);
    }
    SpanFromColumns(s, i, &span);
    span.track_id = c->chunk.track;
    if (c->chunk.op_ids.empty()) {
      span.op_id = s.name[i];
    } else if (s.name[i] < c->chunk.op_ids.size()) {
      span.op_id = c->chunk.op_ids[s.name[i]];
    } else {
      return absl::DataLossError(
          absl::StrCat("chunk ", c->chunk.id, " names an operation it lacks"));
    }
    absl::Status status = ToStoredArgs(source, c->chunk, i, &span.args);
    if (!status.ok()) return status;
    if (!visit(span)) return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace meridian
