#include "query/causal_refiner.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace meridian {
namespace {

constexpr int64_t kInfinity = std::numeric_limits<int64_t>::max() / 4;
// Groups spanning more nodes than this bound only the pairs of the latest
// start's node and the earliest end's node, not every pair.
constexpr size_t kAllPairsNodes = 32;

int64_t Sum(int64_t a, int64_t b) {
  return a >= kInfinity || b >= kInfinity ? kInfinity : a + b;
}

// Floyd-Warshall with edges d[u][v] (x_v <= x_u + d[u][v]). False on a
// negative cycle.
bool AllShortestPaths(std::vector<int64_t>* d, int n) {
  std::vector<int64_t>& m = *d;
  for (int k = 0; k < n; ++k) {
    for (int i = 0; i < n; ++i) {
      const int64_t ik = m[i * n + k];
      if (ik >= kInfinity) continue;
      for (int j = 0; j < n; ++j) {
        const int64_t via = Sum(ik, m[k * n + j]);
        if (via < m[i * n + j]) m[i * n + j] = via;
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    if (m[i * n + i] < 0) return false;
  }
  return true;
}

// Adds edge u -> v of weight w to the all-pairs distances.
void AddEdge(std::vector<int64_t>* d, int n, int u, int v, int64_t w) {
  std::vector<int64_t>& m = *d;
  for (int i = 0; i < n; ++i) {
    const int64_t iu = m[i * n + u];
    if (iu >= kInfinity) continue;
    for (int j = 0; j < n; ++j) {
      const int64_t via = Sum(Sum(iu, w), m[v * n + j]);
      if (via < m[i * n + j]) m[i * n + j] = via;
    }
  }
}

}  // namespace

bool CausalKindOf(const std::string& name, CausalSpan::Kind* kind) {
  using Kind = CausalSpan::Kind;
  static const auto* const kinds = new absl::flat_hash_map<std::string, Kind>{
      {"MPI_Barrier", Kind::kAllToAll},
      {"MPI_Allreduce", Kind::kAllToAll},
      {"MPI_Allgather", Kind::kAllToAll},
      {"MPI_Allgatherv", Kind::kAllToAll},
      {"MPI_Alltoall", Kind::kAllToAll},
      {"MPI_Alltoallv", Kind::kAllToAll},
      {"MPI_Reduce_scatter", Kind::kAllToAll},
      {"MPI_Reduce_scatter_block", Kind::kAllToAll},
      {"MPI_Ibarrier", Kind::kAllToAll},
      {"MPI_Iallreduce", Kind::kAllToAll},
      {"MPI_Iallgather", Kind::kAllToAll},
      {"MPI_Iallgatherv", Kind::kAllToAll},
      {"MPI_Ialltoall", Kind::kAllToAll},
      {"MPI_Ialltoallv", Kind::kAllToAll},
      {"MPI_Ireduce_scatter", Kind::kAllToAll},
      {"MPI_Ireduce_scatter_block", Kind::kAllToAll},
      {"MPI_Reduce", Kind::kRootIn},
      {"MPI_Gather", Kind::kRootIn},
      {"MPI_Gatherv", Kind::kRootIn},
      {"MPI_Ireduce", Kind::kRootIn},
      {"MPI_Igather", Kind::kRootIn},
      {"MPI_Igatherv", Kind::kRootIn},
      {"MPI_Bcast", Kind::kRootOut},
      {"MPI_Scatter", Kind::kRootOut},
      {"MPI_Scatterv", Kind::kRootOut},
      {"MPI_Ibcast", Kind::kRootOut},
      {"MPI_Iscatter", Kind::kRootOut},
      {"MPI_Iscatterv", Kind::kRootOut},
      {"MPI_Send", Kind::kSend},
      {"MPI_Ssend", Kind::kSend},
      {"MPI_Rsend", Kind::kSend},
      {"MPI_Bsend", Kind::kSend},
      {"MPI_Isend", Kind::kSend},
      {"MPI_Issend", Kind::kSend},
      {"MPI_Irsend", Kind::kSend},
      {"MPI_Ibsend", Kind::kSend},
      {"MPI_Recv", Kind::kRecv},
      {"MPI_Irecv", Kind::kRecv},
  };
  auto it = kinds->find(name);
  if (it == kinds->end()) return false;
  *kind = it->second;
  return true;
}

CausalRefiner::CausalRefiner(int nodes)
    : nodes_(nodes), bound_(static_cast<size_t>(nodes) * nodes, kInfinity) {}

void CausalRefiner::Add(const CausalSpan& span) {
  using Kind = CausalSpan::Kind;
  if (span.node < 0 || span.node >= nodes_) return;
  const Member member{span.node, span.rank, span.start, span.end, span.id};
  switch (span.kind) {
    case Kind::kSend:
      sends_[{span.comm, span.rank, span.peer, span.tag}].push_back(member);
      return;
    case Kind::kRecv:
      recvs_[{span.comm, span.peer, span.rank, span.tag}].push_back(member);
      return;
    default: {
      Instance& instance = collectives_[{span.comm, span.seq}];
      if (instance.members.empty()) {
        instance.kind = span.kind;
        instance.root = span.peer;
      }
      instance.members.push_back(member);
    }
  }
}

// Every group of constraints: each member of `ends` ends no earlier than
// every member of `starts` starts.
template <typename Visit>
void CausalRefiner::ForEachGroup(Visit visit) const {
  using Kind = CausalSpan::Kind;
  std::vector<Member> one;
  for (const auto& [key, instance] : collectives_) {
    const std::vector<Member>& all = instance.members;
    if (instance.kind == Kind::kAllToAll) {
      visit(absl::MakeConstSpan(all), absl::MakeConstSpan(all));
      continue;
    }
    const Member* root = nullptr;
    for (const Member& m : all) {
      if (m.rank == instance.root) root = &m;
    }
    if (root == nullptr) continue;  // the root's span is not stored
    if (instance.kind == Kind::kRootIn) {
      visit(absl::MakeConstSpan(all), absl::MakeConstSpan(root, 1));
    } else {
      visit(absl::MakeConstSpan(root, 1), absl::MakeConstSpan(all));
    }
  }
  for (const auto& [key, sends] : sends_) {
    auto it = recvs_.find(key);
    if (it == recvs_.end()) continue;
    const std::vector<Member>& recvs = it->second;
    for (size_t i = 0; i < sends.size() && i < recvs.size(); ++i) {
      visit(absl::MakeConstSpan(&sends[i], 1),
            absl::MakeConstSpan(&recvs[i], 1));
    }
  }
}

int64_t CausalRefiner::CountViolations(
    absl::Span<const int64_t> x, int64_t* constraints,
    std::vector<Refinement::Adjustment>* adjustments) const {
  int64_t violations = 0;
  *constraints = 0;
  absl::flat_hash_map<uint64_t, int64_t> shifts;
  ForEachGroup(
      [&](absl::Span<const Member> starts, absl::Span<const Member> ends) {
        int64_t latest = std::numeric_limits<int64_t>::min();
        for (const Member& s : starts) {
          latest = std::max(latest, s.start + x[s.node]);
        }
        for (const Member& e : ends) {
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

void CausalRefiner::CollectBounds() {
  absl::flat_hash_map<int, int64_t> latest_start, earliest_end;
  ForEachGroup(
      [&](absl::Span<const Member> starts, absl::Span<const Member> ends) {
        latest_start.clear();
        earliest_end.clear();
        const Member* latest = &starts[0];
        const Member* earliest = &ends[0];
        for (const Member& s : starts) {
          auto [it, added] = latest_start.try_emplace(s.node, s.start);
          if (!added) it->second = std::max(it->second, s.start);
          if (s.start > latest->start) latest = &s;
        }
        for (const Member& e : ends) {
          auto [it, added] = earliest_end.try_emplace(e.node, e.end);
          if (!added) it->second = std::min(it->second, e.end);
          if (e.end < earliest->end) earliest = &e;
        }
        const bool all_pairs = latest_start.size() <= kAllPairsNodes &&
                               earliest_end.size() <= kAllPairsNodes;
        for (const auto& [a, start] : latest_start) {
          for (const auto& [b, end] : earliest_end) {
            if (a == b) continue;
            if (!all_pairs && a != latest->node && b != earliest->node)
              continue;
            int64_t& w = bound_[static_cast<size_t>(a) * nodes_ + b];
            w = std::min(w, end - start);
          }
        }
      });
}

bool CausalRefiner::TrySolve(absl::Span<const int64_t> uncertainty_ns,
                             int64_t slack, int widen,
                             std::vector<int64_t>* x) const {
  // Vertex 0 is the collector's clock (x = 0); vertex n + 1 is node n.
  const int v = nodes_ + 1;
  std::vector<int64_t> d(static_cast<size_t>(v) * v, kInfinity);
  for (int i = 0; i < v; ++i) d[i * v + i] = 0;
  for (int a = 0; a < nodes_; ++a) {
    for (int b = 0; b < nodes_; ++b) {
      // x_a <= x_b + w: edge b -> a.
      const int64_t w = bound_[static_cast<size_t>(a) * nodes_ + b];
      if (w < kInfinity) {
        int64_t& e = d[(b + 1) * v + (a + 1)];
        e = std::min(e, w + slack);
      }
    }
    const int64_t u = std::max<int64_t>(uncertainty_ns[a], 0) << (2 * widen);
    d[0 * v + (a + 1)] = std::min(d[0 * v + (a + 1)], u);  // x_a <= u
    d[(a + 1) * v + 0] = std::min(d[(a + 1) * v + 0], u);  // -x_a <= u
  }
  if (!AllShortestPaths(&d, v)) return false;
  if (x == nullptr) return true;
  x->assign(nodes_, 0);
  std::vector<bool> fixed(nodes_, false);
  for (int round = 0; round < nodes_; ++round) {
    int pick = -1;
    int64_t narrowest = kInfinity;
    for (int n = 0; n < nodes_; ++n) {
      if (fixed[n]) continue;
      const int64_t width = Sum(d[0 * v + (n + 1)], d[(n + 1) * v + 0]);
      if (pick < 0 || width < narrowest) {
        pick = n;
        narrowest = width;
      }
    }
    const int64_t hi = d[0 * v + (pick + 1)];
    const int64_t lo = -d[(pick + 1) * v + 0];
    const int64_t value = std::clamp<int64_t>(0, lo, hi);
    fixed[pick] = true;
    (*x)[pick] = value;
    AddEdge(&d, v, 0, pick + 1, value);
    AddEdge(&d, v, pick + 1, 0, -value);
  }
  return true;
}

Refinement CausalRefiner::Solve(absl::Span<const int64_t> uncertainty_ns) {
  Refinement result;
  const std::vector<int64_t> zero(nodes_, 0);
  result.correction_ns = zero;
  result.violations_before = CountViolations(zero, &result.constraints);
  result.violations_after = result.violations_before;
  CollectBounds();

  constexpr int kMaxWiden = 8;
  int64_t slack = 0;
  if (!TrySolve(uncertainty_ns, 0, kMaxWiden, nullptr)) {
    // Causality contradicts itself under one offset per node: the nodes'
    // errors vary during the job by more than the constraints' margins.
    // Find the least slack that makes the bounds consistent.
    int64_t lo = 0, hi = 1;
    while (hi < kInfinity / 4 &&
           !TrySolve(uncertainty_ns, hi, kMaxWiden, nullptr)) {
      hi *= 2;
    }
    if (hi >= kInfinity / 4) {
      result.note = "the causal constraints cannot be met: no correction";
      return result;
    }
    while (lo + 1 < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      (TrySolve(uncertainty_ns, mid, kMaxWiden, nullptr) ? hi : lo) = mid;
    }
    slack = hi;
  }
  for (int widen = 0; widen <= kMaxWiden; ++widen) {
    std::vector<int64_t> x;
    if (!TrySolve(uncertainty_ns, slack, widen, &x)) continue;
    result.correction_ns = std::move(x);
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
    result.violations_after = CountViolations(
        result.correction_ns, &constraints, &result.adjustments);
    return result;
  }
  return result;  // not reached: the widest bounds were feasible
}

}  // namespace meridian
