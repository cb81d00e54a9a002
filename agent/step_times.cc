#include "agent/step_times.h"

#include <algorithm>
#include <utility>

namespace meridian {
namespace {

// v1::Category's MPI (1), NCCL (2) and C10D (10) as indexes of Sums; -1 for
// the others.
int CommunicationIndex(uint8_t category) {
  switch (category) {
    case 1:
      return 0;
    case 2:
      return 1;
    case 10:
      return 2;
    default:
      return -1;
  }
}

}  // namespace

void StepTimes::Add(int64_t step, uint8_t category, bool marker, bool gpu,
                    int64_t dur_ns, int32_t peer, int64_t bytes) {
  if (gpu || step <= taken_through_) return;
  if (marker) {
    if (ended_.size() >= kMaxDone) {
      ended_.erase(ended_.begin());
      ++dropped_;
    }
    ended_.push_back({step, dur_ns, 0, {}});
    return;
  }
  const int index = CommunicationIndex(category);
  if (index < 0) return;
  if (last_ == nullptr || last_step_ != step) {
    auto [it, added] = open_.try_emplace(step, Sums{});
    if (added && open_.size() > kMaxOpen) {
      const bool oldest = open_.begin() == it;
      open_.erase(open_.begin());
      if (oldest) {  // older than every step kept: not counted
        last_ = nullptr;
        return;
      }
    }
    last_step_ = step;
    last_ = &it->second;
  }
  last_->by_category[index] += dur_ns;
  if (peer < 0 || bytes <= 0) return;
  std::vector<Peer>& peers = last_->peers;
  auto it = std::find_if(peers.begin(), peers.end(),
                         [peer](const Peer& p) { return p.peer == peer; });
  if (it == peers.end()) {
    if (peers.size() == kMaxPeers) return;
    it = peers.insert(peers.end(), Peer{peer, 0, 0});
  }
  it->ns += dur_ns;
  it->bytes += bytes;
}

std::vector<StepTimes::Step> StepTimes::Take() {
  for (Step& s : ended_) {
    auto it = open_.find(s.step);
    if (it == open_.end()) continue;
    const std::array<int64_t, 3>& sums = it->second.by_category;
    const int64_t comm = *std::max_element(sums.begin(), sums.end());
    s.comm_ns = std::min(comm, s.dur_ns);
    s.peers = std::move(it->second.peers);
  }
  if (!ended_.empty()) {
    taken_through_ = std::max(taken_through_, ended_.back().step);
    open_.erase(open_.begin(), open_.upper_bound(taken_through_));
    last_ = nullptr;
  }
  return std::exchange(ended_, {});
}

}  // namespace meridian
