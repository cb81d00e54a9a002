#include "query/clocks/job_clocks.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "query/ops/mpi_args.h"

namespace meridian {
namespace {

// The refinement's bound for a node that has no clock model.
constexpr int64_t kUnknownClockBoundNs = 1000000000;

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 31);
}

}  // namespace

uint64_t JobClocks::SpanId(const StoredSpan& span) {
  uint64_t h = Mix(0, static_cast<uint64_t>(span.track_id));
  h = Mix(h, static_cast<uint64_t>(span.start_ns));
  h = Mix(h, static_cast<uint64_t>(span.op_id));
  return Mix(h, static_cast<uint64_t>(span.dur_ns));
}

absl::StatusOr<JobClocks> JobClocks::Load(
    Store& store, const JobCatalog& catalog,
    const std::function<void(const StoredSpan&)>& visit, const JobRead& read,
    const std::optional<StoredJobResult>* stored) {
  JobClocks clocks;
  clocks.job_middle_ns_ =
      catalog.job.min_start_ns +
      (catalog.job.max_end_ns - catalog.job.min_start_ns) / 2;
  absl::Status status = clocks.LoadNodes(store, catalog);
  if (!status.ok()) return status;
  const bool whole_job = !read.keep && read.ranges.size() == 1 &&
                         read.ranges[0].whole_job() && !read.message_steps;
  const int64_t models = clocks.Models();
  if (stored != nullptr && stored->has_value() &&
      (*stored)->spans == catalog.job.spans &&
      (*stored)->written_ns == catalog.job.written_ns &&
      (*stored)->models == models && clocks.Apply((*stored)->data)) {
    clocks.from_stored_ = true;
    clocks.solved_ns_ = (*stored)->computed_ns;
    if (visit) {
      for (const ScanRange& range : read.ranges) {
        status = store.Scan(
            catalog.job, range,
            [&](const StoredSpan& span) {
              if (!read.keep || read.keep(span)) visit(span);
              return true;
            },
            read.stats);
        if (!status.ok()) return status;
      }
    }
    return clocks;
  }
  std::vector<int64_t> first_start(clocks.nodes_.size(),
                                   std::numeric_limits<int64_t>::max());
  if (!clocks.nodes_.empty()) {
    status = clocks.Refine(store, catalog, visit, read, &first_start);
    if (!status.ok()) return status;
  }
  clocks.SetEpoch(catalog, first_start);
  clocks.solved_ns_ = absl::ToUnixNanos(absl::Now());
  if (whole_job) {
    clocks.new_solution_ =
        StoredJobResult{catalog.job.spans, catalog.job.written_ns, models,
                        clocks.solved_ns_, clocks.Serialize()};
  }
  return clocks;
}

int64_t JobClocks::Models() const {
  int64_t models = 0;
  for (const Node& node : nodes_) {
    models += static_cast<int64_t>(node.timeline.models().size());
  }
  return models;
}

// Lines: "meridian-clocks 1", "epoch E", "refinement CONSTRAINTS BEFORE
// AFTER REFINED", "note ESCAPED", then "node ESCAPED-NAME CORRECTION" per
// node in order and "shift ID NS" per end shift.
std::string JobClocks::Serialize() const {
  std::string out = absl::StrCat(
      "meridian-clocks 1\nepoch ", epoch_ns_, "\nrefinement ",
      refinement_.constraints, " ", refinement_.violations_before, " ",
      refinement_.violations_after, " ", refinement_.refined ? 1 : 0, "\nnote ",
      absl::CEscape(refinement_.note), "\n");
  for (const Node& node : nodes_) {
    absl::StrAppend(&out, "node ", absl::CEscape(node.name), " ",
                    node.correction_ns, "\n");
  }
  std::vector<std::pair<uint64_t, int64_t>> shifts(end_shift_.begin(),
                                                   end_shift_.end());
  std::sort(shifts.begin(), shifts.end());
  for (const auto& [id, ns] : shifts) {
    absl::StrAppend(&out, "shift ", id, " ", ns, "\n");
  }
  return out;
}

bool JobClocks::Apply(absl::string_view data) {
  std::vector<absl::string_view> lines =
      absl::StrSplit(data, '\n', absl::SkipEmpty());
  if (lines.size() < 4 + nodes_.size() || lines[0] != "meridian-clocks 1") {
    return false;
  }
  const auto fields = [](absl::string_view line) {
    return std::vector<absl::string_view>(absl::StrSplit(line, ' '));
  };
  int64_t epoch = 0;
  std::vector<absl::string_view> f = fields(lines[1]);
  if (f.size() != 2 || f[0] != "epoch" || !absl::SimpleAtoi(f[1], &epoch)) {
    return false;
  }
  Refinement refinement;
  int refined = 0;
  f = fields(lines[2]);
  if (f.size() != 5 || f[0] != "refinement" ||
      !absl::SimpleAtoi(f[1], &refinement.constraints) ||
      !absl::SimpleAtoi(f[2], &refinement.violations_before) ||
      !absl::SimpleAtoi(f[3], &refinement.violations_after) ||
      !absl::SimpleAtoi(f[4], &refined)) {
    return false;
  }
  refinement.refined = refined != 0;
  if (!absl::StartsWith(lines[3], "note ") ||
      !absl::CUnescape(lines[3].substr(5), &refinement.note)) {
    return false;
  }
  std::vector<int64_t> corrections(nodes_.size());
  for (size_t n = 0; n < nodes_.size(); ++n) {
    f = fields(lines[4 + n]);
    std::string name;
    if (f.size() != 3 || f[0] != "node" || !absl::CUnescape(f[1], &name) ||
        name != nodes_[n].name || !absl::SimpleAtoi(f[2], &corrections[n])) {
      return false;
    }
  }
  absl::flat_hash_map<uint64_t, int64_t> shifts;
  for (size_t i = 4 + nodes_.size(); i < lines.size(); ++i) {
    f = fields(lines[i]);
    uint64_t id;
    int64_t ns;
    if (f.size() != 3 || f[0] != "shift" || !absl::SimpleAtoi(f[1], &id) ||
        !absl::SimpleAtoi(f[2], &ns) || ns < 0) {
      return false;
    }
    shifts[id] = ns;
  }
  epoch_ns_ = epoch;
  refinement.correction_ns = corrections;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    nodes_[n].correction_ns = corrections[n];
  }
  refinement_ = std::move(refinement);
  end_shift_ = std::move(shifts);
  return true;
}

absl::Status JobClocks::LoadNodes(Store& store, const JobCatalog& catalog) {
  absl::flat_hash_map<std::string, int> index_of_node;
  absl::flat_hash_map<int64_t, int> node_of_process;
  for (const ProcessInfo& p : catalog.processes) {
    auto [it, added] =
        index_of_node.try_emplace(p.node, static_cast<int>(nodes_.size()));
    if (added) nodes_.push_back(Node{p.node, {}, {}, 0});
    nodes_[it->second].ranks.push_back(p.rank);
    node_of_process[p.id] = it->second;
  }
  for (Node& node : nodes_) {
    auto models = store.LoadClockModels(node.name, catalog.job.id);
    if (!models.ok()) return models.status();
    node.timeline = ClockTimeline(std::move(*models));
  }
  for (const TrackInfo& t : catalog.tracks) {
    node_of_track_[t.id] = node_of_process[t.process_id];
  }
  return absl::OkStatus();
}

absl::Status JobClocks::Refine(
    Store& store, const JobCatalog& catalog,
    const std::function<void(const StoredSpan&)>& visit, const JobRead& read,
    std::vector<int64_t>* first_start) {
  absl::flat_hash_map<int64_t, int32_t> rank_of_process;
  for (const ProcessInfo& p : catalog.processes) rank_of_process[p.id] = p.rank;
  absl::flat_hash_map<int64_t, int32_t> rank_of_track;
  for (const TrackInfo& t : catalog.tracks) {
    rank_of_track[t.id] = rank_of_process[t.process_id];
  }
  absl::flat_hash_map<int64_t, SpanRole> role_of_op;
  for (const OpInfo& op : catalog.ops) {
    const SpanRole role = RoleOf(op.category, op.name);
    if (op.category == v1::CATEGORY_MPI && CausalRefiner::Orders(role)) {
      role_of_op[op.id] = role;
    }
  }
  CausalRefiner refiner(static_cast<int>(nodes_.size()));
  bool cancelled = false;
  auto refine = [&](const StoredSpan& span) {
    if (read.cancel != nullptr &&
        read.cancel->load(std::memory_order_relaxed)) {
      cancelled = true;
      return false;
    }
    if (read.keep && !read.keep(span)) return true;
    if (visit) visit(span);
    const int node = node_of_track_[span.track_id];
    (*first_start)[node] = std::min((*first_start)[node], span.start_ns);
    auto role = role_of_op.find(span.op_id);
    if (role == role_of_op.end()) return true;
    // The messages this read pairs (the refiner's matching pairs them).
    if (IsMessage(role->second) &&
        !PairsMessage(read.message_steps, span.step)) {
      return true;
    }
    // A neighbor collective's sources or a Win_post's or Win_start's
    // group, read by Add.
    const std::vector<int32_t> sources = ListedRanks(role->second, span);
    CausalSpan c;
    c.role = role->second;
    c.sources = sources;
    c.node = node;
    c.rank = rank_of_track[span.track_id];
    c.comm = span.comm;
    c.seq = span.seq;
    c.peer = span.peer.value_or(-1);
    c.tag = span.tag.value_or(0);
    const ClockTimeline& timeline = nodes_[c.node].timeline;
    c.start = timeline.ToCollector(span.start_ns);
    c.end = timeline.ToCollector(span.start_ns + span.dur_ns);
    c.id = SpanId(span);
    refiner.Add(c);
    return true;
  };
  for (const ScanRange& range : read.ranges) {
    absl::Status scan = store.Scan(catalog.job, range, refine, read.stats);
    if (!scan.ok()) return scan;
    if (cancelled) {
      return absl::CancelledError(
          absl::StrCat("solving job ", catalog.job.name, "'s clocks: stopped"));
    }
  }
  std::vector<int64_t> bounds;
  for (const Node& node : nodes_) {
    bounds.push_back(node.timeline.known()
                         ? node.timeline.UncertaintyAt(job_middle_ns_)
                         : kUnknownClockBoundNs);
  }
  refinement_ = refiner.Solve(bounds);
  for (size_t n = 0; n < nodes_.size(); ++n) {
    nodes_[n].correction_ns = refinement_.correction_ns[n];
  }
  for (const Refinement::Adjustment& a : refinement_.adjustments) {
    end_shift_[a.id] = a.end_shift_ns;
  }
  return absl::OkStatus();
}

void JobClocks::SetEpoch(const JobCatalog& catalog,
                         const std::vector<int64_t>& first_start) {
  // Each node's conversion only grows with t, so the earliest shown start
  // is the earliest of the nodes' images of their earliest raw starts.
  epoch_ns_ = std::numeric_limits<int64_t>::max();
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (first_start[n] == std::numeric_limits<int64_t>::max()) continue;
    const Node& node = nodes_[n];
    epoch_ns_ = std::min(epoch_ns_, node.timeline.ToCollector(first_start[n]) +
                                        node.correction_ns);
  }
  if (epoch_ns_ == std::numeric_limits<int64_t>::max()) {
    epoch_ns_ = catalog.job.min_start_ns;
  }
}

const JobClocks::Node& JobClocks::NodeOf(int64_t track_id) const {
  auto it = node_of_track_.find(track_id);
  return nodes_[it == node_of_track_.end() ? 0 : it->second];
}

JobClocks::Interval JobClocks::Place(const StoredSpan& span) const {
  const Node& node = NodeOf(span.track_id);
  const int64_t start = node.timeline.ToCollector(span.start_ns);
  int64_t dur = node.timeline.ToCollector(span.start_ns + span.dur_ns) - start;
  if (!end_shift_.empty()) {
    auto it = end_shift_.find(SpanId(span));
    if (it != end_shift_.end()) dur += it->second;
  }
  return {start + node.correction_ns, std::max<int64_t>(dur, 0)};
}

int64_t JobClocks::ToRaw(int64_t track_id, int64_t t) const {
  // ToCollector(raw) = raw - OffsetAt(raw): solve raw = x + OffsetAt(raw) by
  // iteration from x; offsets change by ppm over time, so two turns are
  // exact to well under a nanosecond over a job's length.
  const Node& node = NodeOf(track_id);
  const int64_t x = t - node.correction_ns;
  int64_t raw = x + node.timeline.OffsetAt(x);
  raw = x + node.timeline.OffsetAt(raw);
  return raw;
}

v1::ClocksReply JobClocks::Report() const {
  v1::ClocksReply reply;
  for (const Node& node : nodes_) {
    v1::NodeClock* out = reply.add_nodes();
    out->set_node(node.name);
    for (int32_t rank : node.ranks) out->add_ranks(rank);
    const std::vector<NodeClockModel>& models = node.timeline.models();
    out->set_models(static_cast<int32_t>(models.size()));
    out->set_offset_ns(node.timeline.OffsetAt(job_middle_ns_));
    out->set_uncertainty_ns(node.timeline.UncertaintyAt(job_middle_ns_));
    const NodeClockModel* nearest = nullptr;
    for (const NodeClockModel& m : models) {
      if (nearest == nullptr ||
          std::llabs(m.reference_ns - job_middle_ns_) <
              std::llabs(nearest->reference_ns - job_middle_ns_)) {
        nearest = &m;
      }
    }
    out->set_drift_ppb(nearest == nullptr ? 0 : nearest->drift_ppb);
    out->set_correction_ns(node.correction_ns);
    // At most kTimelinePoints models, evenly chosen, the first and last
    // among them.
    constexpr size_t kTimelinePoints = 200;
    const size_t n = models.size();
    const size_t shown = std::min(n, kTimelinePoints);
    for (size_t i = 0; i < shown; ++i) {
      const NodeClockModel& m =
          models[shown == 1 ? 0 : i * (n - 1) / (shown - 1)];
      v1::ClockPoint* point = out->add_timeline();
      point->set_reference_ns(m.reference_ns);
      point->set_offset_ns(m.offset_ns);
      point->set_drift_ppb(m.drift_ppb);
      point->set_uncertainty_ns(m.uncertainty_ns);
    }
  }
  reply.set_constraints(refinement_.constraints);
  reply.set_violations_before(refinement_.violations_before);
  reply.set_violations_after(refinement_.violations_after);
  reply.set_adjusted_spans(static_cast<int64_t>(end_shift_.size()));
  reply.set_refined(refinement_.refined);
  reply.set_note(refinement_.note);
  reply.set_solved_ns(solved_ns_);
  reply.set_stored(from_stored_);
  return reply;
}

}  // namespace meridian
