// ClockTimeline: a node's clock over time, as the collector knows it from
// the node's clock models, and the conversion of the node's timestamps to
// the collector's clock.
//
// A model k (fitted at reference_ns r_k) predicts the offset (node clock
// minus collector clock) at node time t as
//   M_k(t) = offset_k + drift_ppb_k * (t - r_k) / 1e9.
// A model is most accurate at its own reference, where its probes were
// taken, so between two references the offset is interpolated linearly
// between the two models' offsets there,
//   OffsetAt(t) = (1 - w) offset_k + w offset_{k+1},  w = (t - r_k) / (r_{k+1}
//   - r_k),
// which is continuous and exact for a clock of constant drift; before the
// first reference and after the last, that model is extended. With no model
// the offset is 0 (raw time). The uncertainty is blended the same way.
//
// More: docs/clocks.md, "2. Models over time" (a worked
// example, checked by clock_timeline_test.cc).
#ifndef MERIDIAN_QUERY_CLOCKS_CLOCK_TIMELINE_H_
#define MERIDIAN_QUERY_CLOCKS_CLOCK_TIMELINE_H_

#include <cstdint>
#include <vector>

#include "store/store.h"

namespace meridian {

class ClockTimeline {
 public:
  ClockTimeline() = default;
  // `models` in ascending reference_ns (as Store::LoadClockModels returns
  // them); models with equal references keep the first.
  explicit ClockTimeline(std::vector<NodeClockModel> models);

  bool known() const { return !models_.empty(); }
  const std::vector<NodeClockModel>& models() const { return models_; }

  // Node clock minus collector clock at node time t, ns.
  int64_t OffsetAt(int64_t t) const;
  // Half-width of OffsetAt's error bound at t, ns (0 if unknown).
  int64_t UncertaintyAt(int64_t t) const;
  // The collector's time for node time t.
  int64_t ToCollector(int64_t t) const { return t - OffsetAt(t); }

 private:
  // Index k of the model at or before t (0 if t precedes them all), and the
  // blend weight of model k + 1.
  size_t Locate(int64_t t, double* weight) const;

  std::vector<NodeClockModel> models_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_CLOCKS_CLOCK_TIMELINE_H_
