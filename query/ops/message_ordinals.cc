#include "query/ops/message_ordinals.h"

namespace meridian {

std::optional<MessageEnd> MessageOrdinals::Next(SpanRole role, int32_t rank,
                                                std::optional<int32_t> peer,
                                                std::optional<int32_t> tag,
                                                uint64_t comm) {
  if ((role != SpanRole::kSend && role != SpanRole::kRecv) || rank < 0 ||
      !peer || *peer < 0) {
    return std::nullopt;
  }
  MessageEnd end;
  end.send = role == SpanRole::kSend;
  end.comm = comm;
  end.source = end.send ? rank : *peer;
  end.destination = end.send ? *peer : rank;
  end.tag = tag.value_or(0);
  auto& [sends, receives] =
      channels_[Channel(comm, end.source, end.destination, end.tag)];
  end.ordinal = end.send ? sends++ : receives++;
  return end;
}

void MessageOrdinals::ForEachEnd(
    SpanRole role, int32_t rank, std::optional<int32_t> peer,
    std::optional<int32_t> tag, const std::optional<ReceiveHalf>& receive,
    uint64_t comm, absl::FunctionRef<void(const MessageEnd&)> visit) {
  if (role == SpanRole::kSendRecv) {
    if (auto end = Next(SpanRole::kSend, rank, peer, tag, comm)) visit(*end);
    if (receive) {
      if (auto end =
              Next(SpanRole::kRecv, rank, receive->peer, receive->tag, comm)) {
        visit(*end);
      }
    }
    return;
  }
  if (auto end = Next(role, rank, peer, tag, comm)) visit(*end);
}

}  // namespace meridian
