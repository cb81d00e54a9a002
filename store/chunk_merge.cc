#include "store/chunk_merge.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

namespace meridian {

absl::Status ArgsOf(
    const SpanColumns& c, size_t i,
    absl::FunctionRef<absl::Status(int64_t id, std::string* to)> text,
    std::vector<StoredArg>* out) {
  const uint32_t begin = i == 0 ? 0 : c.arg_end[i - 1];
  return ArgsOf(
      absl::MakeConstSpan(c.args).subspan(begin, c.arg_end[i] - begin), text,
      out);
}

absl::Status ArgsOf(
    absl::Span<const ChunkArg> args,
    absl::FunctionRef<absl::Status(int64_t id, std::string* to)> text,
    std::vector<StoredArg>* out) {
  out->resize(args.size());
  for (size_t a = 0; a < args.size(); ++a) {
    const ChunkArg& arg = args[a];
    StoredArg& stored = (*out)[a];
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

namespace {

// One open span, its fields side by side: the merge emits spans of many
// chunks in turn, and a span read from its columns touched a cache line
// (and often a page) of each of fifteen columns; a row is two lines.
struct MergeRow {
  int64_t start_ns;
  int64_t dur_ns;
  int64_t bytes;
  uint64_t comm;
  uint64_t seq;
  int64_t step;
  uint64_t correlation;
  double value;
  int32_t peer;
  int32_t tag;
  int32_t partition;
  uint32_t comm_size;
  uint32_t name;
  uint32_t arg_begin;  // into the cursor's args
  uint32_t arg_end;
  uint8_t kind;
  uint8_t flags;
};

// An open chunk: its rows in the scan's range and their args.
struct Cursor {
  int64_t id = 0;
  int64_t track = 0;
  std::vector<int64_t> op_ids;       // as MergeChunk's
  std::vector<std::string> strings;  // as MergeChunk's
  std::vector<MergeRow> rows;
  std::vector<ChunkArg> args;
  size_t next = 0;
};

// Span i of `s` as a row, its args appended to `args` (if set).
MergeRow RowOf(const SpanColumns& s, size_t i, std::vector<ChunkArg>* args) {
  MergeRow r;
  r.start_ns = s.start_ns[i];
  r.dur_ns = s.dur_ns[i];
  r.bytes = s.bytes[i];
  r.comm = s.comm[i];
  r.seq = s.seq[i];
  r.step = s.step[i];
  r.correlation = s.correlation[i];
  r.value = s.value[i];
  r.peer = s.peer[i];
  r.tag = s.tag[i];
  r.partition = s.partition[i];
  r.comm_size = s.comm_size[i];
  r.name = s.name[i];
  r.kind = static_cast<uint8_t>(s.kind[i]);
  r.flags = s.flags[i];
  r.arg_begin = r.arg_end = 0;
  if (args == nullptr) return r;
  const uint32_t begin = i == 0 ? 0 : s.arg_end[i - 1];
  r.arg_begin = static_cast<uint32_t>(args->size());
  args->insert(args->end(), s.args.begin() + begin,
               s.args.begin() + s.arg_end[i]);
  r.arg_end = static_cast<uint32_t>(args->size());
  return r;
}

// A row's fields as SpanFromColumns sets them.
void SpanFromRow(const MergeRow& r, StoredSpan* span) {
  const uint8_t f = r.flags;
  span->start_ns = r.start_ns;
  span->dur_ns = r.dur_ns;
  span->bytes = r.bytes;
  span->peer =
      f & SpanColumns::kHasPeer ? std::optional<int32_t>(r.peer) : std::nullopt;
  span->tag =
      f & SpanColumns::kHasTag ? std::optional<int32_t>(r.tag) : std::nullopt;
  span->comm = r.comm;
  span->comm_size = r.comm_size;
  span->seq =
      f & SpanColumns::kHasSeq ? std::optional<uint64_t>(r.seq) : std::nullopt;
  span->step =
      f & SpanColumns::kHasStep ? std::optional<int64_t>(r.step) : std::nullopt;
  span->partition = f & SpanColumns::kHasPartition
                        ? std::optional<int32_t>(r.partition)
                        : std::nullopt;
  span->correlation = r.correlation;
  span->kind = static_cast<v1::SpanKind>(r.kind);
  span->value = r.value;
}

// A row's args: ArgsOf, with the chunk's strings or the store's.
absl::Status ToStoredArgs(ChunkSource* source, const Cursor& c,
                          const MergeRow& r, std::vector<StoredArg>* out) {
  return ArgsOf(
      absl::MakeConstSpan(c.args).subspan(r.arg_begin, r.arg_end - r.arg_begin),
      [&](int64_t id, std::string* to) -> absl::Status {
        if (c.strings.empty()) {
          auto looked_up = source->LookupString(id);
          if (!looked_up.ok()) return looked_up.status();
          *to = std::move(*looked_up);
          return absl::OkStatus();
        }
        if (id < 0 || static_cast<size_t>(id) >= c.strings.size()) {
          return absl::DataLossError("a chunk's arg names a string it lacks");
        }
        to->assign(c.strings[id]);
        return absl::OkStatus();
      },
      out);
}

// A span's place in a batch's order: its start, then its cursor's rank
// among the open chunks by (track, chunk id) and its index in the chunk.
struct MergeKey {
  int64_t start;
  uint64_t rank_index;  // rank << 32 | index
  bool operator<(const MergeKey& o) const {
    return start != o.start ? start < o.start : rank_index < o.rank_index;
  }
};

// Spans a batch aims at: enough that a batch's work on each open chunk
// (one pass over its next spans) is small beside the sort, few enough that
// the keys stay in cache and a visitor that stops early costs little.
constexpr size_t kBatchSpans = 16384;

int64_t SaturatingAdd(int64_t a, int64_t b) {  // b >= 0
  return a > std::numeric_limits<int64_t>::max() - b
             ? std::numeric_limits<int64_t>::max()
             : a + b;
}

}  // namespace

void SpanFromColumns(const SpanColumns& s, size_t i, StoredSpan* span) {
  SpanFromRow(RowOf(s, i, nullptr), span);
}

namespace {

// Which of a chunk's spans a scan keeps.
struct SpanFilter {
  int64_t abs_end_lo;
  int64_t abs_hi;
  bool by_step;
  int64_t first_step;
  int64_t last_step;
  bool Wanted(const SpanColumns& s, size_t i) const {
    return s.start_ns[i] < abs_hi &&
           s.start_ns[i] + s.dur_ns[i] >= abs_end_lo &&
           (!by_step || ((s.flags[i] & SpanColumns::kHasStep) &&
                         s.step[i] >= first_step && s.step[i] <= last_step));
  }
};

// One MergeChunks call's state.
class Merger {
 public:
  Merger(ChunkSource* source, const ScanRange& range, int64_t abs_end_lo,
         int64_t abs_hi, ScanStats* stats)
      : source_(source),
        filter_{abs_end_lo, abs_hi, range.first_step || range.last_step,
                range.first_step.value_or(std::numeric_limits<int64_t>::min()),
                range.last_step.value_or(std::numeric_limits<int64_t>::max())},
        stats_(stats) {}

  absl::Status Run(const std::function<bool(const StoredSpan&)>& visit) {
    // The next chunk's first start: it changes only when a chunk is taken.
    pending_ = source_->PeekFirstStart();
    while (true) {
      // The open spans' first start.
      int64_t low = std::numeric_limits<int64_t>::max();
      for (const Cursor* c : open_) {
        low = std::min(low, c->rows[c->next].start_ns);
      }
      absl::Status opened = OpenChunks(&low);
      if (!opened.ok()) return opened;
      if (open_.empty()) break;

      // One batch: the open spans starting before `bound`.
      int64_t bound = SaturatingAdd(low, width_);
      const bool cut = *pending_ && **pending_ < bound;  // by the next chunk
      if (cut) bound = **pending_;
      CollectKeys(bound);
      if (keys_.size() < kBatchSpans / 2 && !cut) {
        width_ = SaturatingAdd(width_, width_);
      } else if (keys_.size() > 2 * kBatchSpans) {
        width_ = std::max<int64_t>(1, width_ / 2);
      }
      absl::StatusOr<bool> more = VisitKeys(visit);
      if (!more.ok()) return more.status();
      if (!*more) return absl::OkStatus();
      FreeDone();
    }
    return absl::OkStatus();
  }

 private:
  // Takes every chunk starting at or before `low` (all, while none is
  // open), opening a cursor on its spans in the range; lowers `low` to
  // their first start.
  absl::Status OpenChunks(int64_t* low) {
    while (true) {
      if (!pending_.ok()) return pending_.status();
      if (!*pending_ || (!open_.empty() && **pending_ > *low)) break;
      auto taken = source_->Take(&decoded_);
      if (!taken.ok()) return taken.status();
      pending_ = source_->PeekFirstStart();
      if (!*taken) continue;
      const SpanColumns& all = decoded_.spans;
      if (stats_ != nullptr) {
        ++stats_->chunks_read;
        stats_->chunk_ids.insert(decoded_.id);
        stats_->spans_decoded += static_cast<int64_t>(all.size());
      }
      Cursor* c = FreeCursor();
      const SpanFilter filter = filter_;  // in registers, not reread
      for (size_t i = 0; i < all.size(); ++i) {
        if (filter.Wanted(all, i)) c->rows.push_back(RowOf(all, i, &c->args));
      }
      if (c->rows.empty()) {
        free_cursors_.push_back(c);
        continue;
      }
      c->id = decoded_.id;
      c->track = decoded_.track;
      std::swap(c->op_ids, decoded_.op_ids);
      std::swap(c->strings, decoded_.strings);
      c->next = 0;
      open_.insert(std::upper_bound(open_.begin(), open_.end(), c,
                                    [](const Cursor* a, const Cursor* b) {
                                      return a->track != b->track
                                                 ? a->track < b->track
                                                 : a->id < b->id;
                                    }),
                   c);
      *low = std::min(*low, c->rows[0].start_ns);
    }
    return absl::OkStatus();
  }

  // An empty cursor: one freed before, or a new one.
  Cursor* FreeCursor() {
    Cursor* c;
    if (free_cursors_.empty()) {
      cursors_.push_back(std::make_unique<Cursor>());
      c = cursors_.back().get();
    } else {
      c = free_cursors_.back();
      free_cursors_.pop_back();
    }
    c->rows.clear();
    c->args.clear();
    return c;
  }

  // keys_: the open spans starting before `bound`, sorted by (start,
  // track, chunk id, index); each cursor moved past them.
  void CollectKeys(int64_t bound) {
    keys_.clear();
    for (size_t r = 0; r < open_.size(); ++r) {
      Cursor* c = open_[r];
      size_t i = c->next;
      for (; i < c->rows.size() && c->rows[i].start_ns < bound; ++i) {
        keys_.push_back(
            {c->rows[i].start_ns, static_cast<uint64_t>(r) << 32 | i});
      }
      c->next = i;
    }
    std::sort(keys_.begin(), keys_.end());
  }

  // Visits keys_' spans in order; false once `visit` has.
  absl::StatusOr<bool> VisitKeys(
      const std::function<bool(const StoredSpan&)>& visit) {
    // Locals, not members: `visit` may not change them, so they stay in
    // registers across its calls.
    Cursor* const* open = open_.data();
    StoredSpan& span = span_;
    ChunkSource* source = source_;
    for (const MergeKey& key : keys_) {
      const Cursor& c = *open[key.rank_index >> 32];
      const MergeRow& row = c.rows[key.rank_index & 0xffffffffu];
      SpanFromRow(row, &span);
      span.track_id = c.track;
      if (c.op_ids.empty()) {
        span.op_id = row.name;
      } else if (row.name < c.op_ids.size()) {
        span.op_id = c.op_ids[row.name];
      } else {
        return absl::DataLossError(
            absl::StrCat("chunk ", c.id, " names an operation it lacks"));
      }
      absl::Status status = ToStoredArgs(source, c, row, &span.args);
      if (!status.ok()) return status;
      if (!visit(span)) return false;
    }
    return true;
  }

  // The chunks done are freed for reuse.
  void FreeDone() {
    size_t kept = 0;
    for (Cursor* c : open_) {
      if (c->next < c->rows.size()) {
        open_[kept++] = c;
      } else {
        free_cursors_.push_back(c);
      }
    }
    open_.resize(kept);
  }

  ChunkSource* const source_;
  const SpanFilter filter_;
  ScanStats* const stats_;
  std::vector<std::unique_ptr<Cursor>> cursors_;  // open, and free for reuse
  std::vector<Cursor*> free_cursors_;
  // The open chunks, ascending by (track, chunk id): a cursor's position
  // here is its rank in a batch's keys.
  std::vector<Cursor*> open_;
  // Chunks are decoded here, and only their spans in the range are kept
  // open: a chunk that holds four steps of a track costs one step's memory
  // while a step's scan waits on it, not four (the 100M-span bench's one
  // step decoded 1M spans to keep 257,000).
  MergeChunk decoded_;
  // The spans leave in batches: every open span starting before a bound,
  // sorted by (start, track, chunk id, index). A chunk not yet taken starts
  // at or after the next one's first start, so a bound no later than that
  // leaves out no span that sorts before one in the batch, and the order
  // is the heap merge's, one span at a time, without its pointer chasing
  // (a heap of 4,096 chunks' cursors cost about 400 ns a span).
  std::vector<MergeKey> keys_;
  int64_t width_ = 1 << 20;  // ns a batch spans: adapted to kBatchSpans
  absl::StatusOr<std::optional<int64_t>> pending_ = std::nullopt;
  StoredSpan span_;
};

}  // namespace

absl::Status MergeChunks(ChunkSource* source, const ScanRange& range,
                         int64_t abs_end_lo, int64_t abs_hi,
                         const std::function<bool(const StoredSpan&)>& visit,
                         ScanStats* stats) {
  return Merger(source, range, abs_end_lo, abs_hi, stats).Run(visit);
}

}  // namespace meridian
