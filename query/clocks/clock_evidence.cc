#include "query/clocks/clock_evidence.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "meridian/v1/query.pb.h"

namespace meridian {
namespace {

constexpr absl::string_view kPartHeader = "meridian-evidence 1 part\n";
constexpr absl::string_view kWholeHeader = "meridian-evidence 1 whole\n";

}  // namespace

void ClockEvidence::SawStart(int64_t track_id, int64_t start_ns) {
  auto [it, added] = first_start.try_emplace(track_id, start_ns);
  if (!added) it->second = std::min(it->second, start_ns);
}

std::string EncodeEvidence(const ClockEvidence& evidence, bool whole) {
  v1::StoredClockEvidence out;
  int64_t previous = 0;
  for (const EvidenceSpan& s : evidence.spans) {
    out.add_track_id(s.track_id);
    out.add_op_id(s.op_id);
    // Wrapping (unsigned) differences: decoding adds them back exactly.
    out.add_start_delta_ns(static_cast<int64_t>(
        static_cast<uint64_t>(s.start_ns) - static_cast<uint64_t>(previous)));
    previous = s.start_ns;
    out.add_dur_ns(s.dur_ns);
    out.add_comm(s.comm);
    out.add_communicator_size(s.comm_size);
    out.add_seq(s.has_seq ? s.seq : 0);
    out.add_has_seq(s.has_seq ? 1 : 0);
    out.add_peer(s.peer);
    out.add_tag(s.tag);
    out.add_sources(static_cast<uint32_t>(s.sources.size()));
    for (int32_t r : s.sources) out.add_source_ranks(r);
  }
  // In track order: the same evidence is the same bytes.
  std::vector<std::pair<int64_t, int64_t>> firsts(evidence.first_start.begin(),
                                                  evidence.first_start.end());
  std::sort(firsts.begin(), firsts.end());
  for (const auto& [track, start] : firsts) {
    out.add_first_track(track);
    out.add_first_start_ns(start);
  }
  return absl::StrCat(whole ? kWholeHeader : kPartHeader,
                      out.SerializeAsString());
}

EvidencePart DecodeEvidence(absl::string_view data, ClockEvidence* into) {
  EvidencePart part = EvidencePart::kPart;
  if (absl::ConsumePrefix(&data, kWholeHeader)) {
    part = EvidencePart::kWhole;
  } else if (!absl::ConsumePrefix(&data, kPartHeader)) {
    return EvidencePart::kDamaged;
  }
  v1::StoredClockEvidence in;
  if (!in.ParseFromArray(data.data(), static_cast<int>(data.size()))) {
    return EvidencePart::kDamaged;
  }
  const int n = in.track_id_size();
  if (in.op_id_size() != n || in.start_delta_ns_size() != n ||
      in.dur_ns_size() != n || in.comm_size() != n || in.seq_size() != n ||
      in.has_seq_size() != n || in.peer_size() != n || in.tag_size() != n ||
      in.sources_size() != n ||
      (in.communicator_size_size() != n && in.communicator_size_size() != 0) ||
      in.first_track_size() != in.first_start_ns_size()) {
    return EvidencePart::kDamaged;
  }
  int64_t listed = 0;
  for (uint32_t k : in.sources()) listed += k;
  if (listed != in.source_ranks_size()) return EvidencePart::kDamaged;
  if (part == EvidencePart::kWhole) *into = ClockEvidence{};
  into->spans.reserve(into->spans.size() + n);
  int64_t start = 0;
  int source = 0;
  for (int i = 0; i < n; ++i) {
    EvidenceSpan s;
    s.track_id = in.track_id(i);
    s.op_id = in.op_id(i);
    start = static_cast<int64_t>(static_cast<uint64_t>(start) +
                                 static_cast<uint64_t>(in.start_delta_ns(i)));
    s.start_ns = start;
    s.dur_ns = in.dur_ns(i);
    s.comm = in.comm(i);
    if (in.communicator_size_size() == n) s.comm_size = in.communicator_size(i);
    s.has_seq = in.has_seq(i) != 0;
    s.seq = in.seq(i);
    s.peer = in.peer(i);
    s.tag = in.tag(i);
    s.sources.assign(in.source_ranks().begin() + source,
                     in.source_ranks().begin() + source + in.sources(i));
    source += static_cast<int>(in.sources(i));
    into->spans.push_back(std::move(s));
  }
  for (int i = 0; i < in.first_track_size(); ++i) {
    into->SawStart(in.first_track(i), in.first_start_ns(i));
  }
  return part;
}

}  // namespace meridian
