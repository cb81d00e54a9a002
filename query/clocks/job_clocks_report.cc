// JobClocks::Report: what `meridian clocks` shows of a job's clocks.
#include <algorithm>
#include <cstdlib>

#include "query/clocks/job_clocks.h"

namespace meridian {

v1::ClocksReply JobClocks::Report() const {
  v1::ClocksReply reply;
  for (const Node& node : nodes_) {
    v1::NodeClock* out = reply.add_nodes();
    out->set_node(node.name);
    for (int32_t rank : node.ranks) out->add_ranks(rank);
    const std::vector<NodeClockModel>& models = node.timeline.models();
    out->set_models(static_cast<int32_t>(models.size()));
    out->set_offset_ns(node.timeline.OffsetAt(job_middle_ns_));
    out->set_uncertainty_ns(node.timeline.UncertaintyAt(job_middle_ns_));
    const NodeClockModel* nearest = nullptr;
    for (const NodeClockModel& m : models) {
      if (nearest == nullptr ||
          std::llabs(m.reference_ns - job_middle_ns_) <
              std::llabs(nearest->reference_ns - job_middle_ns_)) {
        nearest = &m;
      }
    }
    out->set_drift_ppb(nearest == nullptr ? 0 : nearest->drift_ppb);
    out->set_correction_ns(node.correction_ns);
    // At most kTimelinePoints models, evenly chosen, the first and last
    // among them.
    constexpr size_t kTimelinePoints = 200;
    const size_t n = models.size();
    const size_t shown = std::min(n, kTimelinePoints);
    for (size_t i = 0; i < shown; ++i) {
      const NodeClockModel& m =
          models[shown == 1 ? 0 : i * (n - 1) / (shown - 1)];
      v1::ClockPoint* point = out->add_timeline();
      point->set_reference_ns(m.reference_ns);
      point->set_offset_ns(m.offset_ns);
      point->set_drift_ppb(m.drift_ppb);
      point->set_uncertainty_ns(m.uncertainty_ns);
    }
  }
  reply.set_constraints(refinement_.constraints);
  reply.set_violations_before(refinement_.violations_before);
  reply.set_violations_after(refinement_.violations_after);
  reply.set_adjusted_spans(static_cast<int64_t>(end_shift_.size()));
  reply.set_refined(refinement_.refined);
  reply.set_note(refinement_.note);
  reply.set_solved_ns(solved_ns_);
  reply.set_stored(from_stored_);
  return reply;
}

}  // namespace meridian
