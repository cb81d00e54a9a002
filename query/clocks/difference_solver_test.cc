#include "query/clocks/difference_solver.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr int64_t kInfinity = std::numeric_limits<int64_t>::max() / 4;

int64_t Sum(int64_t a, int64_t b) {
  return a >= kInfinity || b >= kInfinity ? kInfinity : a + b;
}

// The reference: the dense solve the refiner used before (all-pairs
// shortest paths over the nodes and the collector's vertex, then the nodes
// fixed narrowest first, each update O(V^2)). Slow and obviously right.
std::optional<std::vector<int64_t>> DenseSolve(
    int nodes, const std::vector<DifferenceBound>& bounds,
    const std::vector<int64_t>& uncertainty, int64_t slack, int widen) {
  const int v = nodes + 1;
  std::vector<int64_t> d(static_cast<size_t>(v) * v, kInfinity);
  for (int i = 0; i < v; ++i) d[i * v + i] = 0;
  for (const DifferenceBound& b : bounds) {
    int64_t& e = d[(b.b + 1) * v + (b.a + 1)];
    e = std::min(e, b.w + slack);
  }
  for (int a = 0; a < nodes; ++a) {
    const int64_t u = std::max<int64_t>(uncertainty[a], 0) << (2 * widen);
    d[a + 1] = std::min(d[a + 1], u);
    d[(a + 1) * v] = std::min(d[(a + 1) * v], u);
  }
  const auto relax_all = [&] {
    for (int k = 0; k < v; ++k) {
      for (int i = 0; i < v; ++i) {
        for (int j = 0; j < v; ++j) {
          d[i * v + j] =
              std::min(d[i * v + j], Sum(d[i * v + k], d[k * v + j]));
        }
      }
    }
  };
  relax_all();
  for (int i = 0; i < v; ++i) {
    if (d[i * v + i] < 0) return std::nullopt;
  }
  std::vector<int64_t> x(nodes, 0);
  std::vector<bool> fixed(nodes, false);
  for (int round = 0; round < nodes; ++round) {
    int pick = -1;
    int64_t narrowest = kInfinity;
    for (int n = 0; n < nodes; ++n) {
      const int64_t width = Sum(d[n + 1], d[(n + 1) * v]);
      if (!fixed[n] && (pick < 0 || width < narrowest)) {
        pick = n;
        narrowest = width;
      }
    }
    const int64_t value =
        std::clamp<int64_t>(0, -d[(pick + 1) * v], d[pick + 1]);
    fixed[pick] = true;
    x[pick] = value;
    d[pick + 1] = std::min(d[pick + 1], value);
    d[(pick + 1) * v] = std::min(d[(pick + 1) * v], -value);
    relax_all();
  }
  return x;
}

// Random systems of 2 to 12 nodes, sparse and dense, feasible and not,
// with and without slack and widening: the sparse solve gives the dense
// one's answers exactly.
TEST(DifferenceSolverTest, MatchesTheDenseSolveOnRandomSystems) {
  std::mt19937_64 rng(20261124);
  int feasible = 0, infeasible = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int nodes = 2 + static_cast<int>(rng() % 11);
    const int edges = static_cast<int>(rng() % (nodes * nodes));
    std::vector<DifferenceBound> bounds;
    for (int e = 0; e < edges; ++e) {
      const int a = static_cast<int>(rng() % nodes);
      const int b = static_cast<int>(rng() % nodes);
      if (a == b) continue;
      bounds.push_back({a, b, static_cast<int64_t>(rng() % 2000) - 900});
    }
    std::vector<int64_t> uncertainty(nodes);
    for (int64_t& u : uncertainty) u = static_cast<int64_t>(rng() % 1500);
    const int64_t slack =
        trial % 3 == 0 ? static_cast<int64_t>(rng() % 300) : 0;
    const int widen = static_cast<int>(rng() % 3);
    const DifferenceSolver solver(nodes, bounds, uncertainty);
    const auto dense = DenseSolve(nodes, bounds, uncertainty, slack, widen);
    const auto sparse = solver.Solve(slack, widen);
    ASSERT_EQ(solver.Feasible(slack, widen), dense.has_value()) << trial;
    ASSERT_EQ(sparse.has_value(), dense.has_value()) << trial;
    if (dense) {
      ASSERT_EQ(*sparse, *dense) << trial;
      ++feasible;
    } else {
      ++infeasible;
    }
  }
  // Both kinds were drawn often.
  EXPECT_GT(feasible, 500);
  EXPECT_GT(infeasible, 500);
}

// Two nodes: x1 - x0 <= -50 and x0 - x1 <= 160, probes +-1000: node 0
// (the lower of two equal widths) at 0, node 1 at the point of [-160, -50]
// closest to 0.
TEST(DifferenceSolverTest, FixesTheNarrowestFirstAtThePointClosestToZero) {
  const DifferenceSolver solver(2, {{1, 0, -50}, {0, 1, 160}}, {1000, 1000});
  EXPECT_EQ(solver.Solve(0, 0), (std::vector<int64_t>{0, -50}));
  // A contradiction (x1 - x0 <= -50 and x0 - x1 <= 20: a cycle of -30)
  // needs 15 ns of slack on each bound; then x1 = x0 - 35.
  const DifferenceSolver tight(2, {{1, 0, -50}, {0, 1, 20}}, {1000, 1000});
  EXPECT_FALSE(tight.Feasible(14, 0));
  EXPECT_TRUE(tight.Feasible(15, 0));
  EXPECT_EQ(tight.Solve(14, 0), std::nullopt);
  EXPECT_EQ(tight.Solve(15, 0), (std::vector<int64_t>{0, -35}));
}

}  // namespace
}  // namespace meridian
