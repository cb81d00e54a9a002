#include "query/clocks/causal_refiner.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "query/clocks/difference_solver.h"

namespace meridian {
namespace {

constexpr int64_t kInfinity = std::numeric_limits<int64_t>::max() / 4;
// Groups spanning more nodes than this bound only the pairs of the latest
// start's node and the earliest end's node, not every pair.
constexpr size_t kAllPairsNodes = 32;

}  // namespace

CausalRefiner::CausalRefiner(int nodes)
    : nodes_(nodes),
      latest_start_(std::max(nodes, 0)),
      earliest_end_(std::max(nodes, 0)),
      start_seen_(std::max(nodes, 0)),
      end_seen_(std::max(nodes, 0)) {}

bool CausalRefiner::Orders(SpanRole role) {
  return IsCollective(role) || IsMessage(role) || role == SpanRole::kPost ||
         role == SpanRole::kStart || role == SpanRole::kComplete ||
         role == SpanRole::kWinWait;
}

void CausalRefiner::Add(const CausalSpan& span) {
  if (span.node < 0 || span.node >= nodes_) return;
  if (!Orders(span.role)) return;
  spans_.push_back(span);
  spans_.back().sources = {};  // the caller's storage
  if (span.role == SpanRole::kSendRecv) has_sendrecv_ = true;
  sources_.push_back(span.sources.empty()
                         ? -1
                         : source_lists_.Add(std::vector<int32_t>(
                               span.sources.begin(), span.sources.end())));
}

void CausalRefiner::Reserve(size_t spans) {
  spans_.reserve(spans_.size() + spans);
  sources_.reserve(sources_.size() + spans);
}

bool CausalRefiner::ByOrder(const MpiMatching::Group& group) const {
  // Lock calls are never added, so no hand-off is matched; a group that
  // ends at a Win_start is a post-to-start edge (the header says why not).
  return spans_[group.ends[0]].role != SpanRole::kStart;
}

int64_t CausalRefiner::CountViolations(
    const MpiMatching& groups, absl::Span<const int64_t> x,
    int64_t* constraints, std::vector<Refinement::Adjustment>* adjustments,
    const SettledGroups* settled) const {
  int64_t violations = 0;
  *constraints = 0;
  absl::flat_hash_map<uint64_t, int64_t> shifts;
  if (settled != nullptr) {
    *constraints += settled->constraints();
    violations += settled->CountViolations(x, &shifts);
  }
  groups.ForEachGroup([&](const MpiMatching::Group& group) {
    if (!ByOrder(group)) return;
    int64_t latest = std::numeric_limits<int64_t>::min();
    for (int32_t i : group.starts) {
      const CausalSpan& s = spans_[i];
      latest = std::max(latest, s.start + x[s.node]);
    }
    for (int32_t i : group.ends) {
      const CausalSpan& e = spans_[i];
      ++*constraints;
      const int64_t end = e.end + x[e.node];
      if (end >= latest) continue;
      ++violations;
      if (adjustments != nullptr) {
        int64_t& shift = shifts[e.id];
        shift = std::max(shift, latest - end);
      }
    }
  });
  if (adjustments != nullptr) {
    for (const auto& [id, shift] : shifts) adjustments->push_back({id, shift});
    std::sort(adjustments->begin(), adjustments->end(),
              [](const Refinement::Adjustment& a,
                 const Refinement::Adjustment& b) { return a.id < b.id; });
  }
  return violations;
}

void CausalRefiner::GroupBounds(
    const MpiMatching::Group& group,
    absl::FunctionRef<void(int32_t, int32_t, int64_t)> bound) const {
  // Per node of the group, its latest start and earliest end, in arrays
  // indexed by node: the nodes a group touches are listed as first seen and
  // their entries cleared again at the end. (The bounds go to maps that keep
  // the least per pair, so the order they are found in does not matter.)
  std::vector<int>& start_nodes = start_nodes_;
  std::vector<int>& end_nodes = end_nodes_;
  start_nodes.clear();
  end_nodes.clear();
  const CausalSpan* latest = &spans_[group.last];
  const CausalSpan* earliest = &spans_[group.ends[0]];
  for (int32_t i : group.starts) {
    const CausalSpan& s = spans_[i];
    if (!start_seen_[s.node]) {
      start_seen_[s.node] = 1;
      start_nodes.push_back(s.node);
      latest_start_[s.node] = s.start;
    } else {
      latest_start_[s.node] = std::max(latest_start_[s.node], s.start);
    }
  }
  for (int32_t i : group.ends) {
    const CausalSpan& e = spans_[i];
    if (!end_seen_[e.node]) {
      end_seen_[e.node] = 1;
      end_nodes.push_back(e.node);
      earliest_end_[e.node] = e.end;
    } else {
      earliest_end_[e.node] = std::min(earliest_end_[e.node], e.end);
    }
    if (e.end < earliest->end) earliest = &e;
  }
  for (int a : start_nodes) start_seen_[a] = 0;
  for (int b : end_nodes) end_seen_[b] = 0;
  if (start_nodes.size() <= kAllPairsNodes &&
      end_nodes.size() <= kAllPairsNodes) {
    for (int a : start_nodes) {
      for (int b : end_nodes) {
        if (a != b) bound(a, b, earliest_end_[b] - latest_start_[a]);
      }
    }
    return;
  }
  // Only the pairs of the latest start's node and of the earliest end's
  // node: O(nodes), not nodes x nodes.
  const int la = latest->node;
  const int eb = earliest->node;
  const int64_t latest_of_la = latest_start_[la];
  for (int b : end_nodes) {
    if (b != la) bound(la, b, earliest_end_[b] - latest_of_la);
  }
  const int64_t earliest_of_eb = earliest_end_[eb];
  for (int a : start_nodes) {
    if (a != eb && a != la) bound(a, eb, earliest_of_eb - latest_start_[a]);
  }
}

void CausalRefiner::CollectBounds(const MpiMatching& groups,
                                  const SettledGroups* settled) {
  if (settled != nullptr) {
    bound_.insert(settled->bounds().begin(), settled->bounds().end());
  }
  groups.ForEachGroup([&](const MpiMatching::Group& group) {
    if (!ByOrder(group)) return;
    GroupBounds(group, [&](int32_t a, int32_t b, int64_t w) {
      auto [it, added] = bound_.try_emplace(std::make_pair(a, b), w);
      if (!added) it->second = std::min(it->second, w);
    });
  });
}

void CausalRefiner::AddSettled(const MpiMatching::Group& group,
                               SettledGroups* into) const {
  if (!ByOrder(group)) return;
  std::vector<SettledGroups::Start>& starts = settled_starts_;
  std::vector<SettledGroups::End>& ends = settled_ends_;
  starts.clear();
  ends.clear();
  for (int32_t i : group.starts) {
    starts.push_back({spans_[i].node, spans_[i].start});
  }
  for (int32_t i : group.ends) {
    ends.push_back({spans_[i].node, spans_[i].end, spans_[i].id});
  }
  into->AddGroup(starts, ends);
  GroupBounds(
      group, [into](int32_t a, int32_t b, int64_t w) { into->Bound(a, b, w); });
}

std::vector<bool> CausalRefiner::Settle(absl::FunctionRef<bool(int32_t)> final,
                                        int64_t instances_before,
                                        SettledGroups* into) const {
  std::vector<bool> open(spans_.size(), true);
  // What matching leaves out (MpiMatching's constructor) is never matched:
  // it goes once final (until then a span read twice is still found).
  for (size_t i = 0; i < spans_.size(); ++i) {
    const CausalSpan& s = spans_[i];
    bool matches;
    if (IsCollective(s.role)) {
      matches = s.seq.has_value() && s.comm != 0;
    } else if (IsMessage(s.role)) {
      matches =
          s.rank >= 0 &&
          (s.peer >= 0 || (s.role == SpanRole::kSendRecv && s.recv_peer >= 0));
    } else {
      matches = s.rank >= 0 && s.comm != 0;
    }
    open[i] = matches || !final(static_cast<int32_t>(i));
  }
  if (!matching_) return open;
  const MpiMatching& groups = *matching_;
  for (int64_t k = 0; k < groups.instances(); ++k) {
    absl::Span<const int32_t> members = groups.members(k);
    // Of a known size: whole, or not yet. Else: every rank went past it.
    const uint32_t size = spans_[members[0]].comm_size;
    if (size > 0 && members.size() < size) continue;
    if (!std::all_of(members.begin(), members.end(), [&](int32_t i) {
          return final(i) && (size > 0 || spans_[i].end < instances_before);
        })) {
      continue;
    }
    groups.ForEachInstanceGroup(
        k, [&](const MpiMatching::Group& group) { AddSettled(group, into); });
    for (int32_t i : members) open[i] = false;
    const CausalSpan& first = spans_[members[0]];
    into->Close(first.comm, first.seq.value_or(0));
  }
  const std::vector<bool> settles = SettlingMessages(final);
  for (size_t m = 0; m < groups.messages().size(); ++m) {
    if (!settles[m]) continue;
    const auto [send, recv] = groups.messages()[m];
    AddSettled(groups.MessageGroup(m), into);
    open[send] = open[recv] = false;
  }
  return open;
}

std::vector<bool> CausalRefiner::SettlingMessages(
    absl::FunctionRef<bool(int32_t)> final) const {
  const auto& messages = matching_->messages();
  std::vector<bool> settles(messages.size());
  for (size_t m = 0; m < messages.size(); ++m) {
    settles[m] = final(messages[m].first) && final(messages[m].second);
  }
  if (!has_sendrecv_) return settles;
  // A Sendrecv is the send of one message and the receive of another: it
  // leaves the open spans only once both settle, and a message settles only
  // with both of its spans. Settling one half alone would leave the other
  // to be paired again, next update, with a later span of its channel.
  // Each Sendrecv's messages (at most two), then drop, until none changes,
  // every message one of whose spans keeps a half open.
  absl::flat_hash_map<int32_t, std::pair<int32_t, int32_t>> of_span;
  auto halves = [this](int32_t i) {
    const CausalSpan& s = spans_[i];
    return static_cast<int>(s.peer >= 0) + static_cast<int>(s.recv_peer >= 0);
  };
  for (size_t m = 0; m < messages.size(); ++m) {
    for (const int32_t i : {messages[m].first, messages[m].second}) {
      if (spans_[i].role != SpanRole::kSendRecv) continue;
      auto [it, added] = of_span.try_emplace(i, static_cast<int32_t>(m), -1);
      if (!added) it->second.second = static_cast<int32_t>(m);
    }
  }
  // Whether span i can leave: every half of it in a message that settles.
  auto leaves = [&](int32_t i) {
    if (spans_[i].role != SpanRole::kSendRecv) return true;
    const auto [a, b] = of_span.at(i);
    const int settled = static_cast<int>(a >= 0 && settles[a]) +
                        static_cast<int>(b >= 0 && settles[b]);
    return settled == halves(i);
  };
  std::vector<int32_t> work;
  for (size_t m = 0; m < messages.size(); ++m) {
    if (settles[m]) work.push_back(static_cast<int32_t>(m));
  }
  while (!work.empty()) {
    const int32_t m = work.back();
    work.pop_back();
    if (!settles[m]) continue;
    const auto [send, recv] = messages[m];
    if (leaves(send) && leaves(recv)) continue;
    settles[m] = false;
    // Its Sendrecvs' other messages may no longer settle.
    for (const int32_t i : {send, recv}) {
      auto it = of_span.find(i);
      if (it == of_span.end()) continue;
      for (const int32_t other : {it->second.first, it->second.second}) {
        if (other >= 0 && other != m && settles[other]) work.push_back(other);
      }
    }
  }
  return settles;
}

Refinement CausalRefiner::Solve(absl::Span<const int64_t> uncertainty_ns,
                                const SettledGroups* settled) {
  matching_.emplace(static_cast<int32_t>(spans_.size()), [this](int32_t i) {
    const CausalSpan& s = spans_[i];
    return MpiOp{s.role,
                 s.rank,
                 s.peer,
                 s.tag,
                 s.comm,
                 s.seq.value_or(0),
                 s.seq.has_value(),
                 s.start,
                 s.end,
                 source_lists_.Get(sources_[i]),
                 s.recv_peer,
                 s.recv_tag};
  });
  const MpiMatching& groups = *matching_;
  Refinement result;
  const std::vector<int64_t> zero(nodes_, 0);
  result.correction_ns = zero;
  result.violations_before = CountViolations(groups, zero, &result.constraints);
  if (settled != nullptr) {
    result.constraints += settled->constraints();
    result.violations_before += settled->violations_before();
  }
  result.violations_after = result.violations_before;
  CollectBounds(groups, settled);
  // In node-pair order: the solve does not depend on the map's.
  std::vector<DifferenceBound> bounds;
  bounds.reserve(bound_.size());
  for (const auto& [pair, w] : bound_) {
    bounds.push_back({pair.first, pair.second, w});
  }
  std::sort(bounds.begin(), bounds.end(),
            [](const DifferenceBound& x, const DifferenceBound& y) {
              return std::tie(x.a, x.b) < std::tie(y.a, y.b);
            });
  const DifferenceSolver solver(nodes_, bounds, uncertainty_ns);

  constexpr int kMaxWiden = 8;
  int64_t slack = 0;
  if (!solver.Feasible(0, kMaxWiden)) {
    // Causality contradicts itself under one offset per node: the nodes'
    // errors vary during the job by more than the constraints' margins.
    // Find the least slack that makes the bounds consistent.
    int64_t lo = 0, hi = 1;
    while (hi < kInfinity / 4 && !solver.Feasible(hi, kMaxWiden)) {
      hi *= 2;
    }
    if (hi >= kInfinity / 4) {
      result.note = "the causal constraints cannot be met: no correction";
      return result;
    }
    while (lo + 1 < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      (solver.Feasible(mid, kMaxWiden) ? hi : lo) = mid;
    }
    slack = hi;
  }
  for (int widen = 0; widen <= kMaxWiden; ++widen) {
    std::optional<std::vector<int64_t>> x = solver.Solve(slack, widen);
    if (!x) continue;
    result.correction_ns = std::move(*x);
    result.refined = true;
    std::vector<std::string> notes;
    if (slack > 0) {
      notes.push_back(absl::StrCat(
          "the causal constraints contradict each other by up to ", slack,
          " ns (each node's error varies during the job): relaxed by that"));
    }
    if (widen > 0) {
      notes.push_back(
          absl::StrCat("the probe bounds contradicted causality; widened ",
                       int64_t{1} << (2 * widen), "x"));
    }
    result.note = absl::StrJoin(notes, "; ");
    int64_t constraints;
    result.violations_after =
        CountViolations(groups, result.correction_ns, &constraints,
                        &result.adjustments, settled);
    return result;
  }
  return result;  // not reached: the widest bounds were feasible
}

}  // namespace meridian
