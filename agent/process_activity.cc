#include "agent/process_activity.h"

#include <algorithm>
#include <string>

#include "common/utf8.h"

namespace meridian {
namespace {

std::string Name(const void* memory, const ProcessRegionLayout& layout,
                 uint32_t id) {
  const char* data = nullptr;
  uint32_t length = 0;
  if (id == 0 || !StringAt(memory, layout, id, &data, &length)) return "";
  return RepairUtf8(std::string_view(data, length));
}

}  // namespace

void SampleActivity(const void* memory, const ProcessRegionLayout& layout,
                    const NodeTimeMap& time, int64_t node_now_ns,
                    SlotSeen* seen, v1::ProcessActivity* out) {
  const auto* header = static_cast<const ProcessRegionHeader*>(memory);
  auto ago = [&](int64_t raw, bool ticks) {
    return std::max<int64_t>(node_now_ns - time.ToWallNs(raw, ticks), 0);
  };
  for (uint32_t i = 0; i < ProcessRegionHeader::kMaxRings; ++i) {
    const RingSlot& slot = header->slots[i];
    if (slot.state.load(std::memory_order_acquire) != kSlotOwned) continue;
    InFlightState s;
    if (!ReadInFlight(&header->in_flight[i], &s)) continue;
    const bool ticks = (s.flags & ProbeRecord::kTicks) != 0;
    v1::ThreadActivity* t = out->add_threads();
    SlotSeen& last = seen[i];
    if (last.tid != slot.tid || last.calls != s.calls) {
      last = SlotSeen{slot.tid, s.calls, node_now_ns};
    }
    t->set_tid(slot.tid);
    t->set_peer(-1);
    t->set_tag(-1);
    t->set_idle_ns(s.calls == 0 ? -1 : node_now_ns - last.first_seen_ns);
    t->set_calls(s.calls);
    if (s.phase != 0) {
      t->set_phase(Name(memory, layout, s.phase));
      t->set_phase_ns(ago(s.phase_since, s.phase_flags != 0));
    }
    if (s.name == 0) continue;
    t->set_call(Name(memory, layout, s.name));
    if (s.waits_for != 0) t->set_waits_for(Name(memory, layout, s.waits_for));
    t->set_category(v1::Category_IsValid(s.category)
                        ? static_cast<v1::Category>(s.category)
                        : v1::CATEGORY_UNSPECIFIED);
    t->set_call_ns(ago(s.since, ticks));
    t->set_comm(s.comm);
    t->set_comm_size(s.comm_size);
    if (s.flags & ProbeRecord::kHasSeq) {
      t->set_has_seq(true);
      t->set_seq(s.seq);
    }
    t->set_bytes(std::max<int64_t>(s.bytes, 0));
    if ((s.flags & ProbeRecord::kHasPeer) && s.peer >= 0) t->set_peer(s.peer);
    if ((s.flags & ProbeRecord::kHasTag) && s.tag >= 0) t->set_tag(s.tag);
  }
}

}  // namespace meridian
