#include "query/ops/mpi_args.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"

namespace meridian {
namespace {

// The longest well-formed "sources" value: kMaxNeighborSources ranks of at
// most 10 digits, with commas. Anything longer is not split at all.
constexpr size_t kMaxSourcesBytes = kMaxNeighborSources * 11;

const StoredArg* FindArg(const StoredSpan& span, absl::string_view key) {
  for (const StoredArg& arg : span.args) {
    if (arg.key == key) return &arg;
  }
  return nullptr;
}

// A list of ranks in arg `key`: a string, or one rank as an integer.
std::vector<int32_t> RankList(const StoredSpan& span, absl::string_view key) {
  const StoredArg* arg = FindArg(span, key);
  if (arg == nullptr) return {};
  switch (arg->type) {
    case StoredArg::Type::kInt:
      if (arg->int_value < 0 || arg->int_value > INT32_MAX) return {};
      return {static_cast<int32_t>(arg->int_value)};
    case StoredArg::Type::kString:
      return ParseNeighborSources(arg->str);
    default:
      return {};
  }
}

}  // namespace

std::vector<int32_t> ParseNeighborSources(absl::string_view text) {
  std::vector<int32_t> sources;
  if (text.empty() || text.size() > kMaxSourcesBytes) return sources;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int32_t rank = -1;
    // SimpleAtoi takes a sign and spaces; a rank is digits only.
    if (sources.size() == kMaxNeighborSources || part.empty() ||
        part.find_first_not_of("0123456789") != absl::string_view::npos ||
        !absl::SimpleAtoi(part, &rank)) {
      return {};
    }
    sources.push_back(rank);
  }
  return sources;
}

std::vector<int32_t> NeighborSources(const StoredSpan& span) {
  return RankList(span, "sources");
}

std::vector<int32_t> EpochGroup(const StoredSpan& span) {
  return RankList(span, "group");
}

bool ListsRanks(SpanRole role) {
  return role == SpanRole::kNeighbor || role == SpanRole::kPost ||
         role == SpanRole::kStart;
}

std::vector<int32_t> ListedRanks(SpanRole role, const StoredSpan& span) {
  if (role == SpanRole::kNeighbor) return NeighborSources(span);
  if (role == SpanRole::kPost || role == SpanRole::kStart) {
    return EpochGroup(span);
  }
  return {};
}

std::optional<ReceiveHalf> SendrecvReceive(const StoredSpan& span) {
  const StoredArg* peer = FindArg(span, "recv_peer");
  const StoredArg* tag = FindArg(span, "recv_tag");
  auto valid = [](const StoredArg* arg) {
    return arg != nullptr && arg->type == StoredArg::Type::kInt &&
           arg->int_value >= 0 && arg->int_value <= INT32_MAX;
  };
  if (!valid(peer) || !valid(tag)) return std::nullopt;
  return ReceiveHalf{static_cast<int32_t>(peer->int_value),
                     static_cast<int32_t>(tag->int_value)};
}

SpanRole RoleOfSpan(SpanRole op_role, const StoredSpan& span) {
  if (op_role != SpanRole::kLock) return op_role;
  const StoredArg* type = FindArg(span, "lock_type");
  const StoredArg* nocheck = FindArg(span, "nocheck");
  const bool taken =
      nocheck == nullptr ||
      (nocheck->type == StoredArg::Type::kInt && nocheck->int_value == 0);
  if (!taken || type == nullptr || type->type != StoredArg::Type::kString) {
    return SpanRole::kNone;
  }
  if (type->str == "exclusive") return SpanRole::kLock;
  if (type->str == "shared") return SpanRole::kSharedLock;
  return SpanRole::kNone;
}

}  // namespace meridian
