#include "query/job_spans.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "query/causal_refiner.h"

namespace meridian {
namespace {

SpanRole RoleOfCausalKind(CausalSpan::Kind kind) {
  switch (kind) {
    case CausalSpan::Kind::kAllToAll:
      return SpanRole::kAllToAll;
    case CausalSpan::Kind::kRootIn:
      return SpanRole::kRootIn;
    case CausalSpan::Kind::kRootOut:
      return SpanRole::kRootOut;
    case CausalSpan::Kind::kSend:
      return SpanRole::kSend;
    case CausalSpan::Kind::kRecv:
      return SpanRole::kRecv;
  }
  return SpanRole::kNone;
}

// NCCL operations by their collective's name, with or without "nccl".
SpanRole NcclRole(const std::string& name) {
  std::string op = absl::AsciiStrToLower(name);
  if (absl::StartsWith(op, "nccl")) op = op.substr(4);
  if (op == "allreduce" || op == "allgather" || op == "reducescatter" ||
      op == "alltoall") {
    return SpanRole::kAllToAll;
  }
  if (op == "reduce") return SpanRole::kRootIn;
  if (op == "broadcast" || op == "bcast") return SpanRole::kRootOut;
  if (op == "send") return SpanRole::kSend;
  if (op == "recv") return SpanRole::kRecv;
  return SpanRole::kNone;
}

}  // namespace

SpanRole RoleOf(v1::Category category, const std::string& name) {
  switch (category) {
    case v1::CATEGORY_MPI: {
      CausalSpan::Kind kind;
      if (CausalKindOf(name, &kind)) return RoleOfCausalKind(kind);
      if (name == "MPI_Wait" || name == "MPI_Waitall" ||
          name == "MPI_Waitany" || name == "MPI_Waitsome") {
        return SpanRole::kWait;
      }
      return SpanRole::kNone;
    }
    case v1::CATEGORY_NCCL:
      return NcclRole(name);
    case v1::CATEGORY_CUDA_SYNC:
      return SpanRole::kSync;
    case v1::CATEGORY_CUDA_RUNTIME:
      return absl::StrContains(name, "Synchronize") ? SpanRole::kSync
                                                    : SpanRole::kNone;
    default:
      return SpanRole::kNone;
  }
}

bool IsAsynchronous(v1::Category category, const std::string& name) {
  if (category != v1::CATEGORY_MPI || !absl::StartsWith(name, "MPI_I")) {
    return false;
  }
  SpanRole role = RoleOf(category, name);
  return role != SpanRole::kNone && role != SpanRole::kWait;
}

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
  s.role = op_role_[s.op];
  s.async = op_async_[s.op];
  s.has_step = span.step.has_value();
  s.step = span.step.value_or(0);
  s.has_seq = span.seq.has_value();
  s.seq = span.seq.value_or(0);
  spans_.push_back(s);
}

void JobSpans::Finish() {
  std::sort(spans_.begin(), spans_.end(),
            [](const JobSpan& a, const JobSpan& b) {
              if (a.track != b.track) return a.track < b.track;
              if (a.start != b.start) return a.start < b.start;
              return a.end > b.end;
            });
  for (JobTrack& track : tracks_) track.count = 0;
  for (size_t i = 0; i < spans_.size(); ++i) {
    JobTrack& track = tracks_[spans_[i].track];
    if (track.count++ == 0) track.first = static_cast<int64_t>(i);
  }
}

absl::StatusOr<JobSpans> JobSpans::Load(Store& store, const JobCatalog& catalog,
                                        std::optional<JobClocks>* clocks) {
  JobSpans spans(catalog);
  spans.spans_.reserve(
      static_cast<size_t>(std::max<int64_t>(0, catalog.job.spans)));
  auto loaded = JobClocks::Load(store, catalog, [&](const StoredSpan& span) {
    spans.Add(span, span.start_ns, span.dur_ns);  // raw for now
  });
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
                              tracks_.capacity() * sizeof(JobTrack));
}

}  // namespace meridian
