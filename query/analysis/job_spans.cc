#include "query/analysis/job_spans.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "query/ops/category.h"
#include "query/ops/mpi_args.h"

namespace meridian {

JobSpans::JobSpans(const JobCatalog& catalog) : catalog_(&catalog) {
  absl::flat_hash_map<int64_t, int32_t> process_index;
  for (size_t i = 0; i < catalog.processes.size(); ++i) {
    process_index[catalog.processes[i].id] = static_cast<int32_t>(i);
  }
  for (const TrackInfo& t : catalog.tracks) {
    JobTrack track;
    track.id = t.id;
    auto it = process_index.find(t.process_id);
    track.process = it == process_index.end() ? -1 : it->second;
    track.rank = track.process < 0 ? -1 : catalog.processes[track.process].rank;
    track.kind = t.kind;
    track.name = t.name;
    track_index_[t.id] = static_cast<int32_t>(tracks_.size());
    tracks_.push_back(std::move(track));
  }
  for (size_t i = 0; i < catalog.ops.size(); ++i) {
    const OpInfo& op = catalog.ops[i];
    op_index_[op.id] = static_cast<int32_t>(i);
    op_role_.push_back(RoleOf(op.category, op.name));
    op_async_.push_back(IsAsynchronous(op.category, op.name));
    op_setup_.push_back(IsSetUp(op.category, op.name));
    if (IsStepMarker(op.category, op.name)) {
      step_marker_ = static_cast<int32_t>(i);
    }
  }
}

void JobSpans::Add(const StoredSpan& span, int64_t start_ns, int64_t dur_ns) {
  if (span.kind != v1::SPAN_KIND_COMPLETE) return;
  auto track = track_index_.find(span.track_id);
  auto op = op_index_.find(span.op_id);
  // A snapshot's catalog knows every track and op of its spans.
  if (track == track_index_.end() || op == op_index_.end()) return;
  JobSpan s;
  s.start = start_ns;
  s.end = start_ns + dur_ns;
  s.bytes = span.bytes;
  s.comm = span.comm;
  s.correlation = span.correlation;
  s.track = track->second;
  s.op = op->second;
  s.rank = tracks_[s.track].rank;
  s.peer = span.peer.value_or(-1);
  s.tag = span.tag.value_or(0);
  s.category = catalog_->ops[s.op].category;
  s.role = RoleOfSpan(op_role_[s.op], span);
  if (IsMessage(s.role) && !PairsMessage(message_steps_, span.step)) {
    s.role = SpanRole::kNone;
  }
  if (ListsRanks(s.role)) {
    s.sources = source_lists_.Add(ListedRanks(s.role, span));
  }
  s.async = op_async_[s.op];
  if (s.op == step_marker_ && span.step) marks_steps_ = true;
  s.has_step = span.step.has_value();
  s.step = span.step.value_or(0);
  if (s.role == SpanRole::kSendRecv) {
    const std::optional<ReceiveHalf> receive = SendrecvReceive(span);
    s.recv = {receive ? receive->peer : -1, receive ? receive->tag : 0};
  } else {
    s.has_seq = span.seq.has_value();
    s.seq = span.seq.value_or(0);
  }
  spans_.push_back(s);
}

MpiOp JobSpans::MpiOpOf(const JobSpan& s) const {
  MpiOp op{s.role,    s.rank,  s.peer, s.tag,     s.comm, s.has_seq ? s.seq : 0,
           s.has_seq, s.start, s.end,  sources(s)};
  if (s.role == SpanRole::kSendRecv) {
    op.recv_peer = s.recv.peer;
    op.recv_tag = s.recv.tag;
  }
  return op;
}

void JobSpans::Finish() {
  // By track (start ascending, the longer first at one start): the spans
  // come in the scan's order, by start across tracks, so each track's run
  // is sorted already once spans are put by track keeping their order (a
  // counting sort). A run that is not (placed times that cross) is sorted;
  // spans equal in all three keys keep their scan order either way.
  for (JobTrack& track : tracks_) track.count = 0;
  for (const JobSpan& s : spans_) ++tracks_[s.track].count;
  int64_t first = 0;
  for (JobTrack& track : tracks_) {
    track.first = first;
    first += track.count;
  }
  if (spans_.size() <= std::numeric_limits<uint32_t>::max()) {
    // Each span's place, then the spans moved there in place along the
    // permutation's cycles: 4 bytes a span more, not a second copy.
    std::vector<int64_t> next(tracks_.size());
    for (size_t t = 0; t < tracks_.size(); ++t) next[t] = tracks_[t].first;
    std::vector<uint32_t> place(spans_.size());
    for (size_t i = 0; i < spans_.size(); ++i) {
      place[i] = static_cast<uint32_t>(next[spans_[i].track]++);
    }
    for (size_t i = 0; i < spans_.size(); ++i) {
      while (place[i] != i) {
        const uint32_t to = place[i];
        std::swap(spans_[i], spans_[to]);
        std::swap(place[i], place[to]);
      }
    }
  } else {
    std::stable_sort(
        spans_.begin(), spans_.end(),
        [](const JobSpan& a, const JobSpan& b) { return a.track < b.track; });
  }
  const auto order = [](const JobSpan& a, const JobSpan& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  };
  for (const JobTrack& track : tracks_) {
    auto begin = spans_.begin() + track.first;
    auto end = begin + track.count;
    if (!std::is_sorted(begin, end, order)) std::stable_sort(begin, end, order);
  }
}

JobSpans JobSpans::Retimed(absl::Span<const int64_t> start,
                           absl::Span<const int64_t> end) const {
  JobSpans copy = *this;
  for (size_t i = 0; i < copy.spans_.size(); ++i) {
    copy.spans_[i].start = start[i];
    copy.spans_[i].end = end[i];
  }
  // A replay moves each track's spans in order: most tracks stay sorted.
  for (JobTrack& track : copy.tracks_) {
    auto first = copy.spans_.begin() + track.first;
    auto last = first + track.count;
    const auto order = [](const JobSpan& a, const JobSpan& b) {
      return a.start != b.start ? a.start < b.start : a.end > b.end;
    };
    if (!std::is_sorted(first, last, order)) std::sort(first, last, order);
  }
  return copy;
}

absl::StatusOr<JobSpans> JobSpans::Load(
    Store& store, const JobCatalog& catalog, std::optional<JobClocks>* clocks,
    const JobRead& read, const std::optional<StoredJobResult>* stored) {
  JobSpans spans(catalog);
  spans.message_steps_ = read.message_steps;
  if (read.ranges.size() == 1 && read.ranges[0].whole_job()) {
    spans.spans_.reserve(
        static_cast<size_t>(std::max<int64_t>(0, catalog.job.spans)));
  }
  auto loaded = JobClocks::Load(
      store, catalog,
      [&](const StoredSpan& span) {
        spans.Add(span, span.start_ns, span.dur_ns);  // raw for now
      },
      read, stored);
  if (!loaded.ok()) return loaded.status();
  clocks->emplace(std::move(*loaded));
  // Place each span as JobClocks::Place places a stored one: it needs the
  // raw start and duration, the track and the operation.
  StoredSpan raw;
  for (JobSpan& s : spans.spans_) {
    raw.start_ns = s.start;
    raw.dur_ns = s.end - s.start;
    raw.track_id = spans.tracks_[s.track].id;
    raw.op_id = catalog.ops[s.op].id;
    const JobClocks::Interval placed = (*clocks)->Place(raw);
    s.start = placed.start_ns;
    s.end = placed.start_ns + placed.dur_ns;
  }
  spans.Finish();
  return spans;
}

absl::Status StepNotFound(const std::string& job, int64_t step) {
  return absl::NotFoundError(
      absl::StrCat("job ", job, " has no span tagged with step ", step,
                   "; `meridian steps` lists its "
                   "steps"));
}

absl::StatusOr<JobSpans> JobSpans::LoadStep(
    Store& store, const JobCatalog& catalog, int64_t step,
    std::optional<JobClocks>* clocks, ScanStats* stats,
    const std::optional<StoredJobResult>* stored, int64_t max_spans) {
  return LoadSteps(store, catalog, step, step, clocks, stats, stored, nullptr,
                   max_spans);
}

namespace {

// The spans tagged with a step of a range on one track: the one starting
// first and the one ending last (raw times, as the scan returns them).
struct StepEdges {
  StoredSpan first;
  StoredSpan last;
};

// One scan of the spans tagged with steps first..last, their clocks
// refined from those spans, each track's StepEdges into *edges.
absl::StatusOr<JobClocks> StepEdgesOf(
    Store& store, const JobCatalog& catalog, int64_t first, int64_t last,
    ScanStats* stats, const std::optional<StoredJobResult>* stored,
    absl::flat_hash_map<int64_t, StepEdges>* edges) {
  JobRead tagged;
  tagged.ranges[0].first_step = first;
  tagged.ranges[0].last_step = last;
  tagged.message_steps = std::make_pair(first, last);
  tagged.stats = stats;
  auto keep = [](const StoredSpan& from, StoredSpan* to) {
    to->start_ns = from.start_ns;
    to->dur_ns = from.dur_ns;
    to->track_id = from.track_id;
    to->op_id = from.op_id;
  };
  return JobClocks::Load(
      store, catalog,
      [&](const StoredSpan& span) {
        if (span.kind != v1::SPAN_KIND_COMPLETE) return;
        auto [it, added] = edges->try_emplace(span.track_id);
        if (added || span.start_ns < it->second.first.start_ns) {
          keep(span, &it->second.first);
        }
        if (added || span.start_ns + span.dur_ns >
                         it->second.last.start_ns + it->second.last.dur_ns) {
          keep(span, &it->second.last);
        }
      },
      tagged, stored);
}

}  // namespace

absl::StatusOr<JobSpans> JobSpans::LoadSteps(
    Store& store, const JobCatalog& catalog, int64_t first, int64_t last,
    std::optional<JobClocks>* clocks, ScanStats* stats,
    const std::optional<StoredJobResult>* stored,
    const std::pair<int64_t, int64_t>* cover, int64_t max_spans) {
  // 1. The step's own spans: per track the one starting first and the one
  // ending last.
  absl::flat_hash_map<int64_t, StepEdges> edges;
  auto step_clocks =
      StepEdgesOf(store, catalog, first, last, stats, stored, &edges);
  if (!step_clocks.ok()) return step_clocks.status();
  if (edges.empty()) {
    return StepNotFound(catalog.job.name, first);
  }
  int64_t window_start = std::numeric_limits<int64_t>::max();
  int64_t window_end = std::numeric_limits<int64_t>::min();
  for (const auto& [track, e] : edges) {
    window_start = std::min(window_start, step_clocks->Place(e.first).start_ns);
    const JobClocks::Interval last = step_clocks->Place(e.last);
    window_end = std::max(window_end, last.start_ns + last.dur_ns);
  }
  if (cover != nullptr) {
    window_start = std::min(window_start, cover->first);
    window_end = std::max(window_end, cover->second);
  }

  // 2. Per node, every track's chunks overlapping the window on that
  // node's clock (and the node's own tagged spans, whatever the mapping).
  absl::flat_hash_map<int64_t, std::string> node_of_process;
  for (const ProcessInfo& p : catalog.processes) node_of_process[p.id] = p.node;
  struct NodeRead {
    ScanRange range;
    int64_t raw_start = std::numeric_limits<int64_t>::max();
    int64_t raw_end = std::numeric_limits<int64_t>::min();
  };
  std::map<std::string, NodeRead> nodes;  // ordered: reads are repeatable
  for (const TrackInfo& t : catalog.tracks) {
    NodeRead& node = nodes[node_of_process[t.process_id]];
    if (!node.range.tracks) {  // the node's first track: its clock's window
      node.range.tracks.emplace();
      node.raw_start = step_clocks->ToRaw(t.id, window_start);
      node.raw_end = step_clocks->ToRaw(t.id, window_end);
    }
    node.range.tracks->insert(t.id);
    auto e = edges.find(t.id);
    if (e != edges.end()) {
      node.raw_start = std::min(node.raw_start, e->second.first.start_ns);
      node.raw_end = std::max(node.raw_end,
                              e->second.last.start_ns + e->second.last.dur_ns);
    }
  }
  // One scan of the union of the nodes' windows, each span kept if it is
  // in its own node's window: one pass over the chunks, however many nodes
  // (a scan per node read the window's chunks once per node: 21 s for one
  // step of a 4,096-node job).
  absl::flat_hash_map<int64_t, const NodeRead*> read_of_track;
  ScanRange all;
  all.tracks.emplace();
  int64_t raw_start = std::numeric_limits<int64_t>::max();
  int64_t raw_end = std::numeric_limits<int64_t>::min();
  for (const auto& [name, node] : nodes) {
    for (int64_t track : *node.range.tracks) {
      read_of_track[track] = &node;
      all.tracks->insert(track);
    }
    raw_start = std::min(raw_start, node.raw_start);
    raw_end = std::max(raw_end, node.raw_end);
  }
  JobRead window;
  window.message_steps = std::make_pair(first, last);
  window.stats = stats;
  window.max_spans = max_spans;
  window.models_of = &*step_clocks;  // the models read once
  // ScanRange times count from the job's first span; `to` is exclusive.
  all.from_ns = raw_start - catalog.job.min_start_ns;
  all.to_ns = raw_end - catalog.job.min_start_ns + 1;
  window.ranges = {std::move(all)};
  window.keep = [&read_of_track](const StoredSpan& span) {
    auto it = read_of_track.find(span.track_id);
    return it != read_of_track.end() && span.start_ns <= it->second->raw_end &&
           span.start_ns + span.dur_ns >= it->second->raw_start;
  };
  return Load(store, catalog, clocks, window, stored);
}

std::vector<int32_t> JobSpans::Ranks() const {
  std::vector<int32_t> ranks;
  for (const JobTrack& track : tracks_) {
    if (track.count > 0) ranks.push_back(track.rank);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

int64_t JobSpans::MemoryBytes() const {
  return static_cast<int64_t>(spans_.capacity() * sizeof(JobSpan) +
                              tracks_.capacity() * sizeof(JobTrack)) +
         source_lists_.MemoryBytes();
}

}  // namespace meridian
