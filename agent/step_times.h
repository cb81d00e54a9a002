// StepTimes: one traced process's steps as they end, for fail-slow
// detection at the collector (docs/health.md, "Slowdowns"): per step its
// own time (the probe's "step" span, meridian_step_end) and the time its
// CPU threads spent in MPI, NCCL and torch.distributed calls tagged with
// it. Sent with the agent's activity report, about every second
// (v1::ProcessActivity.steps).
//
// Communication is summed per category and the largest sum taken, so that
// a torch.distributed operation over MPI (c10d around MPI) is not counted
// twice; GPU tracks are left out (their time overlaps the CPU's).
// Point-to-point calls (a peer, no collective sequence number, bytes > 0)
// are also summed per peer, time and bytes, for the links' transfer rates
// (at most kMaxPeers peers a step, the first met; the calls of others are
// not summed per peer).
//
// Contract: Add() is given every record tagged with a step (cheap: a
// branch, and a map update for communication and step spans); Take()
// returns the steps whose own span came since the last Take, oldest first,
// each with the communication added by then: the agent drains a process's
// rings one after the other, so a step's span read from one thread's ring
// may come before its calls on another thread's, but all come within the
// drains between two Takes (a second apart) unless that thread lags.
// Calls of a step already taken are not counted. Bounded: at most kMaxOpen
// steps' sums are kept (the oldest dropped) and kMaxDone ended steps wait
// for Take() (the oldest dropped, counted in dropped()). Not thread-safe
// (the agent's loop owns it).
#ifndef MERIDIAN_AGENT_STEP_TIMES_H_
#define MERIDIAN_AGENT_STEP_TIMES_H_

#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace meridian {

class StepTimes {
 public:
  static constexpr size_t kMaxDone = 1024;
  // Sums are kept until Take(): those of up to kMaxDone ended steps, and a
  // few more begun.
  static constexpr size_t kMaxOpen = kMaxDone + 64;
  static constexpr size_t kMaxPeers = 8;

  struct Peer {
    int32_t peer = -1;  // a world rank
    int64_t ns = 0;
    int64_t bytes = 0;
  };
  struct Step {
    int64_t step = 0;
    int64_t dur_ns = 0;
    int64_t comm_ns = 0;
    std::vector<Peer> peers;  // by first call
  };

  // A record tagged with `step`: `category` as v1::Category, `marker` if it
  // is the step's own span, `gpu` if on a GPU track; `peer` (-1: none) and
  // `bytes` of a point-to-point call.
  void Add(int64_t step, uint8_t category, bool marker, bool gpu,
           int64_t dur_ns, int32_t peer = -1, int64_t bytes = 0);
  std::vector<Step> Take();
  uint64_t dropped() const { return dropped_; }

 private:
  // Communication per category (MPI, NCCL, c10d), and per peer.
  struct Sums {
    std::array<int64_t, 3> by_category{};
    std::vector<Peer> peers;
  };
  std::map<int64_t, Sums> open_;
  // The sums last added to, of step last_step_ (most calls are of the step
  // the call before them was); null once Take() has erased them.
  int64_t last_step_ = 0;
  Sums* last_ = nullptr;
  std::vector<Step> ended_;            // their own spans came, not taken yet
  int64_t taken_through_ = INT64_MIN;  // the last step taken
  uint64_t dropped_ = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_AGENT_STEP_TIMES_H_
