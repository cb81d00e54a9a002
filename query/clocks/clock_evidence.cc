#include "query/clocks/clock_evidence.h"

#include <algorithm>

#include "query/clocks/causal_refiner.h"
#include "query/ops/mpi_args.h"

namespace meridian {

std::optional<SpanRole> EvidenceRole(v1::Category category,
                                     const std::string& name) {
  if (category != v1::CATEGORY_MPI) return std::nullopt;
  const SpanRole role = RoleOf(category, name);
  if (!CausalRefiner::Orders(role)) return std::nullopt;
  return role;
}

bool EvidenceReadsArgs(SpanRole role) {
  return role == SpanRole::kSendRecv || ListsRanks(role);
}

EvidenceSpan EvidenceOf(SpanRole role, const StoredSpan& span) {
  EvidenceSpan e;
  e.track_id = span.track_id;
  e.op_id = span.op_id;
  e.start_ns = span.start_ns;
  e.dur_ns = span.dur_ns;
  e.comm = span.comm;
  e.comm_size = span.comm_size;
  e.has_seq = span.seq.has_value();
  e.seq = span.seq.value_or(0);
  e.peer = span.peer.value_or(-1);
  e.tag = span.tag.value_or(0);
  // A neighbor collective's sources or a Win_post's or Win_start's group.
  if (ListsRanks(role)) e.sources = ListedRanks(role, span);
  if (role == SpanRole::kSendRecv) {
    if (const std::optional<ReceiveHalf> r = SendrecvReceive(span)) {
      e.recv_peer = r->peer;
      e.recv_tag = r->tag;
    }
  }
  return e;
}

void ClockEvidence::SawStart(int64_t track_id, int64_t start_ns) {
  auto [it, added] = first_start.try_emplace(track_id, start_ns);
  if (!added) it->second = std::min(it->second, start_ns);
}

}  // namespace meridian
