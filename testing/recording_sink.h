// RecordingSink: a CaptureSink for tests of the capture libraries. It keeps
// names and records in memory, reads a clock the test sets, and has a
// training step the test sets.
#ifndef MERIDIAN_TESTING_RECORDING_SINK_H_
#define MERIDIAN_TESTING_RECORDING_SINK_H_

#include <mutex>
#include <string>
#include <vector>

#include "capture/probe/capture_sink.h"

namespace meridian {

class RecordingSink : public CaptureSink {
 public:
  struct Emitted {
    ProbeRecord record;
    bool stamp_step;
  };

  bool Recording() override { return recording; }
  uint32_t Name(const char* name) override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == name) return static_cast<uint32_t>(i + 1);
    }
    names_.push_back(name);
    return static_cast<uint32_t>(names_.size());
  }
  void Emit(const ProbeRecord& record, bool stamp_step) override {
    std::lock_guard<std::mutex> lock(mutex_);
    emitted_.push_back({record, stamp_step});
  }
  // The calls in flight, as the probe would publish them: the one entered
  // last and not left, if any.
  void EnterCall(const ProbeRecord& record) override {
    std::lock_guard<std::mutex> lock(mutex_);
    in_call_ = record;
    entered_ = true;
  }
  void LeaveCall() override {
    std::lock_guard<std::mutex> lock(mutex_);
    entered_ = false;
    ++left_;
  }
  bool InCall(ProbeRecord* record) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (entered_ && record != nullptr) *record = in_call_;
    return entered_;
  }
  int left() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return left_;
  }
  int64_t NowNs() override { return now_ns; }
  bool Step(int64_t* step) override {
    if (step_ < 0) return false;
    *step = step_;
    return true;
  }

  // The string of id `id` ("" for 0 or an unknown id).
  std::string NameOf(uint32_t id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return id == 0 || id > names_.size() ? "" : names_[id - 1];
  }
  std::vector<Emitted> Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(emitted_);
  }

  bool recording = true;
  int64_t now_ns = 0;
  void set_step(int64_t step) { step_ = step; }  // -1: none

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> names_;
  std::vector<Emitted> emitted_;
  int64_t step_ = -1;
  ProbeRecord in_call_{};
  bool entered_ = false;
  int left_ = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_TESTING_RECORDING_SINK_H_
