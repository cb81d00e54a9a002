// DifferenceSolver: the causal refinement's system of difference
// constraints, solved on a sparse graph. Unknowns x_0..x_{n-1} (one
// correction per node) with
//   x_a - x_b <= w + slack          for each bound (a, b, w)
//   |x_a| <= uncertainty_a * 4^widen
// Feasible() says whether some x meets them all; Solve() also fixes the
// nodes one at a time, the narrowest feasible range first (ties: the lower
// node), each at the point of its range closest to 0, which keeps the rest
// feasible: the probe models are trusted as far as causality allows.
//
// The graph has a vertex per node plus the collector's clock (x = 0) and
// an edge per bound. Feasibility is Bellman-Ford from the collector's
// vertex (queue-based, with a negative-cycle check by path length). The
// ranges are the shortest distances to and from that vertex; fixing a node
// adds two edges, and only the distances they shorten are updated, each by
// a Dijkstra from the fixed node over weights made non-negative by the
// current distances (they are valid potentials) and cut off where no
// distance can shorten any more. Nothing is nodes x nodes: memory is
// O(nodes + bounds), and a solve costs what the bounds and the ranges the
// fixes change cost, not the cube of the node count. The answers are those
// of the dense all-pairs solve (difference_solver_test.cc checks them
// against it on random systems).
#ifndef MERIDIAN_QUERY_CLOCKS_DIFFERENCE_SOLVER_H_
#define MERIDIAN_QUERY_CLOCKS_DIFFERENCE_SOLVER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"

namespace meridian {

struct DifferenceBound {
  int a = 0;  // x_a - x_b <= w
  int b = 0;
  int64_t w = 0;
};

class DifferenceSolver {
 public:
  // `bounds` of nodes 0..nodes-1 (a != b); `uncertainty_ns` per node.
  DifferenceSolver(int nodes, absl::Span<const DifferenceBound> bounds,
                   absl::Span<const int64_t> uncertainty_ns);

  bool Feasible(int64_t slack, int widen) const;
  // nullopt if not feasible.
  std::optional<std::vector<int64_t>> Solve(int64_t slack, int widen) const;

 private:
  struct Edge {
    int to;
    int64_t w;
  };
  struct Graph {
    std::vector<std::vector<Edge>> out, in;
  };
  Graph Build(int64_t slack, int widen) const;
  // Shortest distances from vertex 0 (over `in` edges reversed when
  // `reverse`: distances to vertex 0); false on a negative cycle.
  static bool BellmanFord(const Graph& g, bool reverse,
                          std::vector<int64_t>* dist);

  int nodes_;
  std::vector<DifferenceBound> bounds_;
  std::vector<int64_t> uncertainty_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_CLOCKS_DIFFERENCE_SOLVER_H_
