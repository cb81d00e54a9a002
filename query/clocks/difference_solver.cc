#include "query/clocks/difference_solver.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <queue>
#include <utility>

namespace meridian {
namespace {

constexpr int64_t kInfinity = std::numeric_limits<int64_t>::max() / 4;

// a + b, held within +-kInfinity (negative cycles drive sums down).
int64_t Add(int64_t a, int64_t b) {
  return std::clamp<int64_t>(a + b, -kInfinity, kInfinity);
}

}  // namespace

DifferenceSolver::DifferenceSolver(int nodes,
                                   absl::Span<const DifferenceBound> bounds,
                                   absl::Span<const int64_t> uncertainty_ns)
    : nodes_(nodes),
      bounds_(bounds.begin(), bounds.end()),
      uncertainty_(uncertainty_ns.begin(), uncertainty_ns.end()) {
  uncertainty_.resize(nodes_, 0);
}

// Vertex 0 is the collector's clock; vertex n + 1 is node n. Edge u -> v of
// weight w: x_v <= x_u + w.
DifferenceSolver::Graph DifferenceSolver::Build(int64_t slack,
                                                int widen) const {
  Graph g;
  const int v = nodes_ + 1;
  g.out.resize(v);
  g.in.resize(v);
  const auto edge = [&](int from, int to, int64_t w) {
    g.out[from].push_back({to, w});
    g.in[to].push_back({from, w});
  };
  for (const DifferenceBound& b : bounds_) {
    edge(b.b + 1, b.a + 1, Add(b.w, slack));  // x_a <= x_b + w
  }
  for (int a = 0; a < nodes_; ++a) {
    const int64_t u = std::min<int64_t>(
        std::max<int64_t>(uncertainty_[a], 0) << (2 * widen), kInfinity);
    edge(0, a + 1, u);  // x_a <= u
    edge(a + 1, 0, u);  // -x_a <= u
  }
  return g;
}

bool DifferenceSolver::BellmanFord(const Graph& g, bool reverse,
                                   std::vector<int64_t>* dist) {
  const int v = static_cast<int>(g.out.size());
  const auto& edges = reverse ? g.in : g.out;
  dist->assign(v, kInfinity);
  std::vector<int> length(v, 0);  // edges on the current shortest path
  std::vector<bool> queued(v, false);
  std::deque<int> queue;
  (*dist)[0] = 0;
  queue.push_back(0);
  queued[0] = true;
  while (!queue.empty()) {
    const int u = queue.front();
    queue.pop_front();
    queued[u] = false;
    for (const Edge& e : edges[u]) {
      const int64_t via = Add((*dist)[u], e.w);
      if (via >= (*dist)[e.to]) continue;
      (*dist)[e.to] = via;
      length[e.to] = length[u] + 1;
      if (length[e.to] >= v) return false;  // a path longer than V: a cycle
      if (!queued[e.to]) {
        queued[e.to] = true;
        queue.push_back(e.to);
      }
    }
  }
  return (*dist)[0] >= 0;
}

bool DifferenceSolver::Feasible(int64_t slack, int widen) const {
  std::vector<int64_t> dist;
  return BellmanFord(Build(slack, widen), false, &dist);
}

std::optional<std::vector<int64_t>> DifferenceSolver::Solve(int64_t slack,
                                                            int widen) const {
  Graph g = Build(slack, widen);
  // hi[v]: shortest 0 -> v (x_v <= hi); to0[v]: shortest v -> 0 (x_v >= -to0).
  std::vector<int64_t> hi, to0;
  if (!BellmanFord(g, false, &hi) || !BellmanFord(g, true, &to0)) {
    return std::nullopt;
  }
  const int v = nodes_ + 1;
  std::vector<int64_t> x(nodes_, 0);
  std::vector<bool> fixed(nodes_, false);
  // Scratch for the cut-off Dijkstras.
  std::vector<int64_t> reach(v, kInfinity);
  std::vector<int> touched;
  using Item = std::pair<int64_t, int>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  // Reduced distances from `p` (over `in` edges when `reverse`) below
  // `limit`, with potential `phi`: calls found(vertex, reduced distance).
  const auto cut_dijkstra = [&](int p, bool reverse,
                                const std::vector<int64_t>& phi, int64_t limit,
                                const auto& found) {
    const auto& edges = reverse ? g.in : g.out;
    reach[p] = 0;
    touched.push_back(p);
    heap.push({0, p});
    while (!heap.empty()) {
      const auto [d, u] = heap.top();
      heap.pop();
      if (d != reach[u]) continue;
      found(u, d);
      for (const Edge& e : edges[u]) {
        // Forward: w + phi(u) - phi(to) >= 0, phi = hi. Reverse (edge
        // to -> u walked back): w + phi(u) - phi(to), phi = to0.
        const int64_t reduced = e.w + phi[u] - phi[e.to];
        const int64_t nd = d + reduced;
        if (nd >= limit || nd >= reach[e.to]) continue;
        if (reach[e.to] == kInfinity) touched.push_back(e.to);
        reach[e.to] = nd;
        heap.push({nd, e.to});
      }
    }
    for (int t : touched) reach[t] = kInfinity;
    touched.clear();
  };
  std::vector<std::pair<int, int64_t>> hi_updates, to0_updates;
  // The unfixed nodes by (range width, node), lazily: an entry whose width
  // is no longer the node's is skipped.
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> narrowest;
  for (int n = 0; n < nodes_; ++n) {
    narrowest.push({Add(hi[n + 1], to0[n + 1]), n});
  }
  for (int round = 0; round < nodes_; ++round) {
    int pick = -1;
    while (pick < 0) {
      const auto [width, n] = narrowest.top();
      narrowest.pop();
      if (!fixed[n] && width == Add(hi[n + 1], to0[n + 1])) pick = n;
    }
    const int p = pick + 1;
    const int64_t value = std::clamp<int64_t>(0, -to0[p], hi[p]);
    // Fixing x_p = value adds 0 -> p (value) and p -> 0 (-value): a
    // distance from 0 shortens to value + dist(p -> n), one to 0 to
    // dist(n -> p) - value, where those are below the old ones.
    const int64_t forward_limit = hi[p] - value;
    const int64_t reverse_limit = to0[p] + value;
    cut_dijkstra(p, false, hi, forward_limit, [&](int n, int64_t d) {
      hi_updates.push_back({n, hi[n] + d - forward_limit});
    });
    cut_dijkstra(p, true, to0, reverse_limit, [&](int n, int64_t d) {
      to0_updates.push_back({n, to0[n] + d - reverse_limit});
    });
    hi[p] = value;
    to0[p] = -value;
    for (const auto& [n, d] : hi_updates) hi[n] = std::min(hi[n], d);
    for (const auto& [n, d] : to0_updates) to0[n] = std::min(to0[n], d);
    for (const auto* updates : {&hi_updates, &to0_updates}) {
      for (const auto& [n, d] : *updates) {
        if (n > 0 && !fixed[n - 1] && n != p) {
          narrowest.push({Add(hi[n], to0[n]), n - 1});
        }
      }
    }
    hi_updates.clear();
    to0_updates.clear();
    g.out[0].push_back({p, value});
    g.in[p].push_back({0, value});
    g.out[p].push_back({0, -value});
    g.in[0].push_back({p, -value});
    fixed[pick] = true;
    x[pick] = value;
  }
  return x;
}

}  // namespace meridian
