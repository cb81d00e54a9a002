// WaitHeatmap: the rank x step heatmap of the web page's /api/stragglers
// (web_server.h), binned so that a browser draws at most a few thousand
// cells for any job.
#ifndef MERIDIAN_WEB_WAIT_HEATMAP_H_
#define MERIDIAN_WEB_WAIT_HEATMAP_H_

#include <cstdint>
#include <vector>

#include "meridian/v1/query.pb.h"

namespace meridian {

// The heatmap of /api/stragglers: per (rank bin, step bin) the time others
// waited for the ranks of the bin in the steps of the bin (the instances
// whose last arrival was that rank, CollectiveInstance.wait_ns). Bins are
// contiguous ranges, at most `max_rank_bins` x `max_step_bins`, over the
// ranks of the reply and the steps of its instances (all zero where nobody
// waited); instances without a step are left out.
struct WaitHeatmap {
  std::vector<int32_t> rank_starts;  // first rank of each bin, ascending
  std::vector<int64_t> step_starts;  // first step of each bin
  int32_t last_rank = -1;
  int64_t last_step = -1;
  std::vector<int64_t> wait_ns;  // rank bin major: [r * steps + s]
  int32_t hottest_rank = -1;     // the rank others waited for most in one
  int64_t hottest_step = -1;     // step, and that step (-1: no waiting)
};
WaitHeatmap MakeWaitHeatmap(const v1::StragglersReply& reply, int max_rank_bins,
                            int max_step_bins);

}  // namespace meridian

#endif  // MERIDIAN_WEB_WAIT_HEATMAP_H_
