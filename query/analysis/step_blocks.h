// StepBlocks: how many consecutive steps the analyses that read a job a
// block of steps at a time (streamed_path.h, step_summaries.h,
// streamed_replay.h) read at once. The job's mean step sets the size: a
// block of about `block_spans` spans, counting `extra` steps each read
// holds besides its own (the path reads the step before too), at least one
// step. Steps are not all the mean: a read over the budget (LoadSteps's
// RESOURCE_EXHAUSTED) halves the size, and each read that fits doubles it
// back, up to the mean's.
//
// Example: 1,000 spans a step and block_spans 10,000 make blocks of 10
// steps (9 with extra 1); a read of 10 over the budget makes them 5, a
// read that fits then 10 again.
#ifndef MERIDIAN_QUERY_ANALYSIS_STEP_BLOCKS_H_
#define MERIDIAN_QUERY_ANALYSIS_STEP_BLOCKS_H_

#include <algorithm>
#include <cstdint>

namespace meridian {

class StepBlocks {
 public:
  // A job of `spans` spans over `steps` steps.
  StepBlocks(int64_t spans, int64_t steps, int64_t block_spans,
             int64_t extra = 0)
      : per_step_(std::max<int64_t>(1, spans / std::max<int64_t>(1, steps))),
        full_(std::max<int64_t>(1, block_spans / per_step_ - extra)),
        steps_(full_) {}

  int64_t per_step() const { return per_step_; }
  // How many steps the next block holds.
  int64_t steps() const { return steps_; }
  // After a read of a block of `read` steps over the budget: the size
  // halved; false if the block was one step (it cannot be read at all).
  bool Halve(int64_t read) {
    if (read <= 1) return false;
    steps_ = std::max<int64_t>(1, read / 2);
    return true;
  }
  // After a read within the budget: the size doubled, up to the mean's.
  void Fitted() { steps_ = std::min(full_, 2 * steps_); }

 private:
  int64_t per_step_;
  int64_t full_;
  int64_t steps_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_ANALYSIS_STEP_BLOCKS_H_
