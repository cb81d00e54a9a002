#include "web/wait_heatmap.h"

#include <algorithm>
#include <map>
#include <utility>

namespace meridian {

WaitHeatmap MakeWaitHeatmap(const v1::StragglersReply& reply, int max_rank_bins,
                            int max_step_bins) {
  WaitHeatmap map;
  // Per (rank, step): the waiting, and the ranges seen.
  std::map<std::pair<int32_t, int64_t>, int64_t> cells;
  int32_t max_rank = -1;
  int64_t min_step = 0, max_step = -1;
  bool any_step = false;
  for (const v1::RankWait& r : reply.ranks()) {
    max_rank = std::max(max_rank, r.rank());
  }
  for (const v1::CollectiveInstance& c : reply.collectives()) {
    if (!c.has_step()) continue;
    min_step = any_step ? std::min(min_step, c.step()) : c.step();
    max_step = any_step ? std::max(max_step, c.step()) : c.step();
    any_step = true;
    if (c.last_rank() < 0) continue;  // nobody waited
    max_rank = std::max(max_rank, c.last_rank());
    cells[{c.last_rank(), c.step()}] += c.wait_ns();
  }
  if (max_rank < 0 || !any_step) return map;
  const int64_t ranks = int64_t{max_rank} + 1;
  const int64_t steps = max_step - min_step + 1;
  const int64_t rank_bins =
      std::min<int64_t>(ranks, std::max(max_rank_bins, 1));
  const int64_t step_bins =
      std::min<int64_t>(steps, std::max(max_step_bins, 1));
  const int64_t ranks_per_bin = (ranks + rank_bins - 1) / rank_bins;
  const int64_t steps_per_bin = (steps + step_bins - 1) / step_bins;
  const int64_t rows = (ranks + ranks_per_bin - 1) / ranks_per_bin;
  const int64_t columns = (steps + steps_per_bin - 1) / steps_per_bin;
  for (int64_t r = 0; r < rows; ++r) {
    map.rank_starts.push_back(static_cast<int32_t>(r * ranks_per_bin));
  }
  for (int64_t s = 0; s < columns; ++s) {
    map.step_starts.push_back(min_step + s * steps_per_bin);
  }
  map.last_rank = max_rank;
  map.last_step = max_step;
  map.wait_ns.assign(static_cast<size_t>(rows * columns), 0);
  int64_t hottest = 0;
  for (const auto& [cell, wait] : cells) {
    const int64_t row = cell.first / ranks_per_bin;
    const int64_t column = (cell.second - min_step) / steps_per_bin;
    map.wait_ns[row * columns + column] += wait;
    if (wait > hottest) {
      hottest = wait;
      map.hottest_rank = cell.first;
      map.hottest_step = cell.second;
    }
  }
  return map;
}

}  // namespace meridian
