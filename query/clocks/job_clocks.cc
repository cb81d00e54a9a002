#include "query/clocks/job_clocks.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <tuple>
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
// The order of the evidence: the refinement's (Store::Scan's).
bool Before(const EvidenceSpan& a, const EvidenceSpan& b) {
  return std::tie(a.start_ns, a.track_id) < std::tie(b.start_ns, b.track_id);
}
// Drops from `fresh` (ascending by Before, as Store::Scan reads) the spans
// `sorted` (ascending too) holds: a span read twice (ClickHouse's write mark
// rereads the last seconds) counts once. In place; only the fresh spans
// not after `sorted`'s last can be in it.
void DropKnown(const std::vector<EvidenceSpan>& sorted,
               std::vector<EvidenceSpan>* fresh) {
  if (sorted.empty() || fresh->empty()) return;
  const auto same = [](const EvidenceSpan& a, const EvidenceSpan& b) {
    return a.op_id == b.op_id && a.dur_ns == b.dur_ns;
  };
  size_t kept = 0;
  for (size_t i = 0; i < fresh->size(); ++i) {
    EvidenceSpan& span = (*fresh)[i];
    if (!Before(sorted.back(), span)) {
      auto run = std::equal_range(sorted.begin(), sorted.end(), span, Before);
      if (std::any_of(run.first, run.second,
                      [&](const EvidenceSpan& e) { return same(e, span); })) {
        continue;
      }
    }
    if (kept != i) (*fresh)[kept] = std::move(span);
    ++kept;
  }
  fresh->resize(kept);
}

// `open` and `fresh`, each ascending by Before, merged as std::merge merges
// them (of equal spans, `open`'s first); moved whole, not copied span by
// span, where one is empty or all of `fresh` comes after `open`.
std::vector<EvidenceSpan> MergeEvidence(std::vector<EvidenceSpan> open,
                                        std::vector<EvidenceSpan> fresh) {
  if (fresh.empty()) return open;
  if (open.empty()) return fresh;
  if (!Before(fresh.front(), open.back())) {
    open.insert(open.end(), std::make_move_iterator(fresh.begin()),
                std::make_move_iterator(fresh.end()));
    return open;
  }
  std::vector<EvidenceSpan> merged;
  merged.reserve(open.size() + fresh.size());
  std::merge(std::make_move_iterator(open.begin()),
             std::make_move_iterator(open.end()),
             std::make_move_iterator(fresh.begin()),
             std::make_move_iterator(fresh.end()), std::back_inserter(merged),
             Before);
  return merged;
}

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  return h ^ (h >> 31);
}

// A span's name in end shifts: of its track, start, operation and duration.
uint64_t SpanIdOf(int64_t track_id, int64_t start_ns, int64_t op_id,
                  int64_t dur_ns) {
  uint64_t h = Mix(0, static_cast<uint64_t>(track_id));
  h = Mix(h, static_cast<uint64_t>(start_ns));
  h = Mix(h, static_cast<uint64_t>(op_id));
  return Mix(h, static_cast<uint64_t>(dur_ns));
}

uint64_t SpanIdOf(const EvidenceSpan& span) {
  return SpanIdOf(span.track_id, span.start_ns, span.op_id, span.dur_ns);
}

// A read stopped at JobRead::max_spans.
absl::Status OverBudget(const JobCatalog& catalog, const JobRead& read) {
  return absl::ResourceExhaustedError(
      absl::StrCat("the read of job ", catalog.job.name, " holds more than ",
                   read.max_spans, " spans"));
}

}  // namespace

uint64_t JobClocks::SpanId(const StoredSpan& span) {
  return SpanIdOf(span.track_id, span.start_ns, span.op_id, span.dur_ns);
}

absl::StatusOr<JobClocks> JobClocks::Load(
    Store& store, const JobCatalog& catalog,
    const std::function<void(const StoredSpan&)>& visit, const JobRead& read,
    const std::optional<StoredJobResult>* stored) {
  JobClocks clocks;
  absl::Status status = clocks.LoadNodes(store, catalog, read.models_of);
  if (!status.ok()) return status;
  const bool whole_job = !read.keep && read.ranges.size() == 1 &&
                         read.ranges[0].whole_job() && !read.message_steps;
  if (clocks.TakeStored(catalog, stored)) {
    if (visit) {
      int64_t kept = 0;
      for (const ScanRange& range : read.ranges) {
        status = store.Scan(
            catalog.job, range,
            [&](const StoredSpan& span) {
              if (read.keep && !read.keep(span)) return true;
              if (read.max_spans > 0 && ++kept > read.max_spans) return false;
              visit(span);
              return true;
            },
            read.stats);
        if (!status.ok()) return status;
        if (read.max_spans > 0 && kept > read.max_spans) {
          return OverBudget(catalog, read);
        }
      }
    }
    return clocks;
  }
  ClockEvidence first_start;
  if (!clocks.nodes_.empty()) {
    // Straight into the refiner, in the scan's order.
    const Roles roles = RolesOf(catalog);
    CausalRefiner refiner(static_cast<int>(clocks.nodes_.size()));
    status = clocks.Gather(
        store, catalog, roles, visit, read,
        [&](EvidenceSpan&& span) { refiner.Add(clocks.ToCausal(roles, span)); },
        &first_start);
    if (!status.ok()) return status;
    clocks.Solve(refiner);
  }
  clocks.SetEpoch(catalog, first_start.first_start);
  clocks.solved_ns_ = absl::ToUnixNanos(absl::Now());
  if (whole_job) clocks.SetNewSolution(catalog);
  return clocks;
}

absl::StatusOr<JobClocks> JobClocks::Update(
    Store& store, const JobCatalog& catalog,
    const std::optional<StoredJobResult>* stored,
    const std::atomic<bool>* cancel, ScanStats* stats, ClockSolveState* state,
    EvidenceLog* log) {
  JobClocks clocks;
  absl::Status status = clocks.LoadNodes(store, catalog);
  if (!status.ok()) return status;
  if (clocks.TakeStored(catalog, stored) || clocks.nodes_.empty()) {
    if (!clocks.from_stored_) {
      clocks.SetEpoch(catalog, {});
      clocks.solved_ns_ = absl::ToUnixNanos(absl::Now());
      clocks.SetNewSolution(catalog);
    }
    return clocks;
  }
  const Roles roles = RolesOf(catalog);
  if (state != nullptr && clocks.Trusts(catalog, stored, *state)) {
    auto updated =
        clocks.UpdateFrom(store, catalog, roles, cancel, stats, state, log);
    if (!updated.ok()) return updated.status();
    if (*updated) return clocks;  // else solved whole below, as loaded
  }
  if (state != nullptr) state->Clear();
  // Before any span is read: what is written after it is new next time.
  auto mark = store.WriteMark(catalog.job.id);
  if (!mark.ok()) return mark.status();
  // The whole job's evidence, in the scan's order (the refinement's:
  // ascending start, then track): from the log where it holds all of it,
  // else from the job's chunks.
  std::optional<ClockEvidence> logged;
  if (log != nullptr && state != nullptr) {
    logged = log->Take(catalog.job.id, 0, *mark, catalog.job.chunks);
  }
  ClockEvidence evidence;
  if (logged) {
    evidence = std::move(*logged);
  } else {
    JobRead read;
    read.cancel = cancel;
    read.stats = stats;
    status = clocks.Gather(
        store, catalog, roles, nullptr, read,
        [&](EvidenceSpan&& span) { evidence.spans.push_back(std::move(span)); },
        &evidence);
    if (!status.ok()) return status;
  }
  clocks.evidence_spans_ = static_cast<int64_t>(evidence.spans.size());
  CausalRefiner refiner(static_cast<int>(clocks.nodes_.size()));
  const int64_t unordered = clocks.AddOrdered(roles, &evidence.spans, &refiner);
  clocks.Solve(refiner);
  clocks.SetEpoch(catalog, evidence.first_start);
  clocks.solved_ns_ = absl::ToUnixNanos(absl::Now());
  clocks.SetNewSolution(catalog);
  if (state != nullptr) {
    // The state made again from all the evidence.
    state->job_id = catalog.job.id;
    for (const Node& node : clocks.nodes_) {
      state->nodes.push_back(node.name);
      state->models.push_back(node.timeline.models());
    }
    state->first_start = std::move(evidence.first_start);
    state->mark = *mark;
    state->chunks = catalog.job.chunks;
    state->solution = clocks.new_solution_;
    ++state->full_solves;
    state->settled_spans += unordered;
    clocks.Settle(roles, refiner, std::move(evidence.spans), state);
  }
  return clocks;
}

bool JobClocks::Trusts(const JobCatalog& catalog,
                       const std::optional<StoredJobResult>* stored,
                       const ClockSolveState& state) const {
  if (state.job_id != catalog.job.id || state.nodes.size() != nodes_.size() ||
      !state.solution || stored == nullptr || !stored->has_value()) {
    return false;
  }
  // The solution it made was stored.
  const StoredJobResult& made = *state.solution;
  const StoredJobResult& kept = **stored;
  if (made.spans != kept.spans || made.written_ns != kept.written_ns ||
      made.models != kept.models || made.computed_ns != kept.computed_ns) {
    return false;
  }
  const auto same = [](const NodeClockModel& a, const NodeClockModel& b) {
    return a.reference_ns == b.reference_ns && a.offset_ns == b.offset_ns &&
           a.drift_ppb == b.drift_ppb && a.uncertainty_ns == b.uncertainty_ns;
  };
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (state.nodes[n] != nodes_[n].name) return false;
    // The models solved with, then only later ones: times before the last
    // of them convert as they did. A node's first model moves all of its
    // times.
    const std::vector<NodeClockModel>& before = state.models[n];
    const std::vector<NodeClockModel>& now = nodes_[n].timeline.models();
    if (before.empty() != now.empty() || now.size() < before.size() ||
        !std::equal(before.begin(), before.end(), now.begin(), same)) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<bool> JobClocks::UpdateFrom(
    Store& store, const JobCatalog& catalog, const Roles& roles,
    const std::atomic<bool>* cancel, ScanStats* stats, ClockSolveState* state,
    EvidenceLog* log) {
  auto mark = store.WriteMark(catalog.job.id);
  if (!mark.ok()) return mark.status();
  ClockEvidence fresh;
  std::optional<ClockEvidence> logged;
  if (log != nullptr && *mark > state->mark) {
    logged = log->Take(catalog.job.id, state->mark, *mark,
                       catalog.job.chunks - state->chunks);
  }
  if (logged) {
    fresh = std::move(*logged);
  } else if (*mark > state->mark) {
    JobRead read;
    read.ranges[0].written_after = state->mark;
    read.cancel = cancel;
    read.stats = stats;
    absl::Status status = Gather(
        store, catalog, roles, nullptr, read,
        [&](EvidenceSpan&& span) { fresh.spans.push_back(std::move(span)); },
        &fresh);
    if (!status.ok()) return status;
  }
  DropKnown(state->open, &fresh.spans);
  // What the state assumed of later spans: none starts before its track's
  // horizon (none is of a settled group), none joins a closed instance,
  // none comes before a settled message in its channel.
  for (const EvidenceSpan& span : fresh.spans) {
    auto horizon = state->horizon.find(span.track_id);
    if (horizon != state->horizon.end() && span.start_ns < horizon->second) {
      return false;
    }
    auto role = roles.of_op.find(span.op_id);
    if (role == roles.of_op.end()) continue;
    if (IsCollective(role->second) && span.has_seq && span.comm != 0 &&
        state->settled.Closed(span.comm, span.seq)) {
      return false;
    }
    bool before_settled = false;
    ForEachChannel(
        roles, span, [&](const ClockSolveState::Channel& channel, bool send) {
          auto settled = state->channels.find(channel);
          before_settled |= settled != state->channels.end() &&
                            span.start_ns <= (send ? settled->second.first
                                                   : settled->second.second);
        });
    if (before_settled) return false;
  }
  state->mark = std::max(state->mark, *mark);
  state->chunks = catalog.job.chunks;
  for (const auto& [track, start] : fresh.first_start) {
    auto [it, added] = state->first_start.try_emplace(track, start);
    if (!added) it->second = std::min(it->second, start);
  }
  std::vector<EvidenceSpan> evidence =
      MergeEvidence(std::move(state->open), std::move(fresh.spans));
  state->open.clear();
  evidence_spans_ =
      state->settled_spans + static_cast<int64_t>(evidence.size());
  CausalRefiner refiner(static_cast<int>(nodes_.size()));
  state->settled_spans += AddOrdered(roles, &evidence, &refiner);
  Solve(refiner, &state->settled);
  SetEpoch(catalog, state->first_start);
  solved_ns_ = absl::ToUnixNanos(absl::Now());
  SetNewSolution(catalog);
  for (size_t n = 0; n < nodes_.size(); ++n) {
    state->models[n] = nodes_[n].timeline.models();
  }
  state->solution = new_solution_;
  ++state->incremental_updates;
  Settle(roles, refiner, std::move(evidence), state);
  return true;
}

int64_t JobClocks::AddOrdered(const Roles& roles,
                              std::vector<EvidenceSpan>* evidence,
                              CausalRefiner* refiner) const {
  refiner->Reserve(evidence->size());
  size_t kept = 0;
  for (size_t i = 0; i < evidence->size(); ++i) {
    const CausalSpan span = ToCausal(roles, (*evidence)[i]);
    if (!CausalRefiner::Orders(span.role)) continue;
    refiner->Add(span);
    if (kept != i) (*evidence)[kept] = std::move((*evidence)[i]);
    ++kept;
  }
  const auto dropped = static_cast<int64_t>(evidence->size() - kept);
  evidence->resize(kept);
  return dropped;
}

void JobClocks::ForEachChannel(
    const Roles& roles, const EvidenceSpan& span,
    absl::FunctionRef<void(const ClockSolveState::Channel&, bool)> visit) {
  auto role = roles.of_op.find(span.op_id);
  if (role == roles.of_op.end() || !IsMessage(role->second)) return;
  auto rank = roles.rank_of_track.find(span.track_id);
  const int32_t own = rank == roles.rank_of_track.end() ? 0 : rank->second;
  if (role->second == SpanRole::kRecv) {
    visit({span.comm, span.peer, own, span.tag}, false);
    return;
  }
  visit({span.comm, own, span.peer, span.tag}, true);  // a send's
  if (role->second == SpanRole::kSendRecv && span.recv_peer >= 0) {
    visit({span.comm, span.recv_peer, own, span.recv_tag}, false);
  }
}

void JobClocks::Settle(const Roles& roles, const CausalRefiner& refiner,
                       std::vector<EvidenceSpan> evidence,
                       ClockSolveState* state) const {
  for (const EvidenceSpan& span : evidence) {
    auto [it, added] =
        state->latest_start.try_emplace(span.track_id, span.start_ns);
    if (!added) it->second = std::max(it->second, span.start_ns);
  }
  // Each track's horizon: its latest start less the margin, no later than
  // its node's last model's reference; never earlier than it was.
  for (const auto& [track, latest] : state->latest_start) {
    auto node = node_of_track_.find(track);
    const int n = node == node_of_track_.end() ? 0 : node->second;
    const std::vector<NodeClockModel>& models = nodes_[n].timeline.models();
    int64_t horizon = latest - state->settle_margin_ns;
    if (!models.empty()) {
      horizon = std::min(horizon, models.back().reference_ns);
    }
    auto [it, added] = state->horizon.try_emplace(track, horizon);
    if (!added) it->second = std::max(it->second, horizon);
  }
  // A collective instance may still gain members of ranks that have not
  // gone past it: it settles once every rank has started a span after it
  // (on the collector's clock; a rank without evidence holds all back).
  absl::flat_hash_map<int32_t, int64_t> progress;  // rank -> placed start
  for (const Node& node : nodes_) {
    for (int32_t rank : node.ranks) {
      if (rank >= 0) {
        progress.try_emplace(rank, std::numeric_limits<int64_t>::min());
      }
    }
  }
  for (const auto& [track, latest] : state->latest_start) {
    auto rank = roles.rank_of_track.find(track);
    auto node = node_of_track_.find(track);
    if (rank == roles.rank_of_track.end() || rank->second < 0 ||
        node == node_of_track_.end()) {
      continue;
    }
    int64_t& p = progress[rank->second];
    p = std::max(p, nodes_[node->second].timeline.ToCollector(latest));
  }
  int64_t instances_before = std::numeric_limits<int64_t>::max();
  for (const auto& [rank, placed] : progress) {
    instances_before = std::min(instances_before, placed);
  }
  if (instances_before != std::numeric_limits<int64_t>::min()) {
    instances_before -= state->settle_margin_ns;
  }
  const std::vector<bool> open = refiner.Settle(
      [&](int32_t i) {
        const EvidenceSpan& span = evidence[i];
        return span.start_ns + span.dur_ns < state->horizon.at(span.track_id);
      },
      instances_before, &state->settled);
  // The open spans stay in `evidence`, moved down over the settled ones (on
  // a job that just ended most are open: no second copy of them).
  size_t kept = 0;
  for (size_t i = 0; i < evidence.size(); ++i) {
    if (open[i]) {
      if (kept != i) evidence[kept] = std::move(evidence[i]);
      ++kept;
      continue;
    }
    ++state->settled_spans;
    ForEachChannel(roles, evidence[i],
                   [&](const ClockSolveState::Channel& channel, bool send) {
                     auto [it, added] = state->channels.try_emplace(
                         channel, std::numeric_limits<int64_t>::min(),
                         std::numeric_limits<int64_t>::min());
                     int64_t& latest =
                         send ? it->second.first : it->second.second;
                     latest = std::max(latest, evidence[i].start_ns);
                   });
  }
  evidence.resize(kept);
  // At most twice the room they need: the state's memory counts capacity.
  if (kept < evidence.capacity() / 2) evidence.shrink_to_fit();
  if (state->open.empty()) {
    state->open = std::move(evidence);
  } else {
    state->open.insert(state->open.end(),
                       std::make_move_iterator(evidence.begin()),
                       std::make_move_iterator(evidence.end()));
  }
}

bool JobClocks::TakeStored(const JobCatalog& catalog,
                           const std::optional<StoredJobResult>* stored) {
  if (stored != nullptr && stored->has_value() &&
      (*stored)->spans == catalog.job.spans &&
      (*stored)->written_ns == catalog.job.written_ns &&
      (*stored)->models == Models() && Apply((*stored)->data)) {
    from_stored_ = true;
    solved_ns_ = (*stored)->computed_ns;
    return true;
  }
  return false;
}

void JobClocks::SetNewSolution(const JobCatalog& catalog) {
  new_solution_ = StoredJobResult{catalog.job.spans, catalog.job.written_ns,
                                  Models(), solved_ns_, Serialize()};
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

absl::Status JobClocks::LoadNodes(Store& store, const JobCatalog& catalog,
                                  const JobClocks* models_of) {
  job_middle_ns_ = catalog.job.min_start_ns +
                   (catalog.job.max_end_ns - catalog.job.min_start_ns) / 2;
  absl::flat_hash_map<std::string, int> index_of_node;
  absl::flat_hash_map<int64_t, int> node_of_process;
  for (const ProcessInfo& p : catalog.processes) {
    auto [it, added] =
        index_of_node.try_emplace(p.node, static_cast<int>(nodes_.size()));
    if (added) nodes_.push_back(Node{p.node, {}, {}, 0});
    nodes_[it->second].ranks.push_back(p.rank);
    node_of_process[p.id] = it->second;
  }
  const bool same_nodes =
      models_of != nullptr && models_of->nodes_.size() == nodes_.size() &&
      std::equal(nodes_.begin(), nodes_.end(), models_of->nodes_.begin(),
                 [](const Node& a, const Node& b) { return a.name == b.name; });
  for (size_t n = 0; n < nodes_.size(); ++n) {
    Node& node = nodes_[n];
    if (same_nodes) {
      node.timeline = models_of->nodes_[n].timeline;
      continue;
    }
    auto models = store.LoadClockModels(node.name, catalog.job.id);
    if (!models.ok()) return models.status();
    node.timeline = ClockTimeline(std::move(*models));
  }
  for (const TrackInfo& t : catalog.tracks) {
    node_of_track_[t.id] = node_of_process[t.process_id];
  }
  return absl::OkStatus();
}

JobClocks::Roles JobClocks::RolesOf(const JobCatalog& catalog) {
  Roles roles;
  absl::flat_hash_map<int64_t, int32_t> rank_of_process;
  for (const ProcessInfo& p : catalog.processes) rank_of_process[p.id] = p.rank;
  for (const TrackInfo& t : catalog.tracks) {
    roles.rank_of_track[t.id] = rank_of_process[t.process_id];
  }
  for (const OpInfo& op : catalog.ops) {
    if (const std::optional<SpanRole> role =
            EvidenceRole(op.category, op.name)) {
      roles.of_op[op.id] = *role;
    }
  }
  return roles;
}

absl::Status JobClocks::Gather(
    Store& store, const JobCatalog& catalog, const Roles& roles,
    const std::function<void(const StoredSpan&)>& visit, const JobRead& read,
    const std::function<void(EvidenceSpan&&)>& add,
    ClockEvidence* first_start) {
  bool cancelled = false;
  int64_t kept = 0;
  auto gather = [&](const StoredSpan& span) {
    if (read.cancel != nullptr &&
        read.cancel->load(std::memory_order_relaxed)) {
      cancelled = true;
      return false;
    }
    if (read.keep && !read.keep(span)) return true;
    if (read.max_spans > 0 && ++kept > read.max_spans) return false;
    if (visit) visit(span);
    first_start->SawStart(span.track_id, span.start_ns);
    auto role = roles.of_op.find(span.op_id);
    if (role == roles.of_op.end()) return true;
    // The messages this read pairs (the refiner's matching pairs them).
    if (IsMessage(role->second) &&
        !PairsMessage(read.message_steps, span.step)) {
      return true;
    }
    add(EvidenceOf(role->second, span));
    return true;
  };
  for (const ScanRange& range : read.ranges) {
    absl::Status scan = store.Scan(catalog.job, range, gather, read.stats);
    if (!scan.ok()) return scan;
    if (cancelled) {
      return absl::CancelledError(
          absl::StrCat("solving job ", catalog.job.name, "'s clocks: stopped"));
    }
    if (read.max_spans > 0 && kept > read.max_spans) {
      return OverBudget(catalog, read);
    }
  }
  return absl::OkStatus();
}

CausalSpan JobClocks::ToCausal(const Roles& roles,
                               const EvidenceSpan& span) const {
  CausalSpan c;
  Roles::OpMemo& op = roles.op_memo[span.op_id & 63];
  if (!op.set || op.id != span.op_id) {
    auto role = roles.of_op.find(span.op_id);
    op = {true, span.op_id,
          role == roles.of_op.end() ? SpanRole::kNone : role->second};
  }
  c.role = op.role;
  c.sources = span.sources;
  Roles::TrackMemo& track = roles.track_memo[span.track_id & 63];
  if (!track.set || track.id != span.track_id) {
    auto node = node_of_track_.find(span.track_id);
    auto rank = roles.rank_of_track.find(span.track_id);
    track = {true, span.track_id,
             node == node_of_track_.end() ? 0 : node->second,
             rank == roles.rank_of_track.end() ? 0 : rank->second};
  }
  c.node = track.node;
  c.rank = track.rank;
  c.comm = span.comm;
  c.comm_size = span.comm_size;
  if (span.has_seq) c.seq = span.seq;
  c.peer = span.peer;
  c.tag = span.tag;
  c.recv_peer = span.recv_peer;
  c.recv_tag = span.recv_tag;
  const ClockTimeline& timeline = nodes_[c.node].timeline;
  c.start = timeline.ToCollector(span.start_ns);
  c.end = timeline.ToCollector(span.start_ns + span.dur_ns);
  c.id = SpanIdOf(span);
  return c;
}

void JobClocks::Solve(CausalRefiner& refiner, const SettledGroups* settled) {
  std::vector<int64_t> bounds;
  for (const Node& node : nodes_) {
    bounds.push_back(node.timeline.known()
                         ? node.timeline.UncertaintyAt(job_middle_ns_)
                         : kUnknownClockBoundNs);
  }
  refinement_ = refiner.Solve(bounds, settled);
  for (size_t n = 0; n < nodes_.size(); ++n) {
    nodes_[n].correction_ns = refinement_.correction_ns[n];
  }
  for (const Refinement::Adjustment& a : refinement_.adjustments) {
    end_shift_[a.id] = a.end_shift_ns;
  }
}

void JobClocks::SetEpoch(
    const JobCatalog& catalog,
    const absl::flat_hash_map<int64_t, int64_t>& first_start) {
  // Each node's conversion only grows with t, so the earliest shown start
  // is the earliest of the nodes' images of their earliest raw starts.
  std::vector<int64_t> first(nodes_.size(),
                             std::numeric_limits<int64_t>::max());
  for (const auto& [track, start] : first_start) {
    auto node = node_of_track_.find(track);
    const int n = node == node_of_track_.end() ? 0 : node->second;
    if (n < static_cast<int>(first.size())) {
      first[n] = std::min(first[n], start);
    }
  }
  epoch_ns_ = std::numeric_limits<int64_t>::max();
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (first[n] == std::numeric_limits<int64_t>::max()) continue;
    const Node& node = nodes_[n];
    epoch_ns_ = std::min(
        epoch_ns_, node.timeline.ToCollector(first[n]) + node.correction_ns);
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

int64_t JobClocks::FirstRawAtOrAfter(int64_t track_id, int64_t t) const {
  const Node& node = NodeOf(track_id);
  auto shown = [&node](int64_t raw) {
    return node.timeline.ToCollector(raw) + node.correction_ns;
  };
  // Bracket the answer, lo < answer <= hi, by doubling steps from ToRaw's
  // guess (usually exact: one step each way), then halve the bracket.
  int64_t hi = ToRaw(track_id, t);
  for (int64_t step = 1; shown(hi) < t && step < (int64_t{1} << 62);
       step *= 2) {
    hi += step;
  }
  int64_t lo = hi - 1;
  for (int64_t step = 1; shown(lo) >= t && step < (int64_t{1} << 62);
       step *= 2) {
    lo -= step;
  }
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (shown(mid) >= t ? hi : lo) = mid;
  }
  return hi;
}

int64_t JobClocks::max_end_shift_ns() const {
  int64_t most = 0;
  for (const auto& [id, shift] : end_shift_) most = std::max(most, shift);
  return most;
}

}  // namespace meridian
