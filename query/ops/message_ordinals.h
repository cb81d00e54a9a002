// MessageOrdinals: MpiMatching's message rule as spans stream in (an
// export): the n-th send and the n-th receive seen of a channel (comm,
// source, destination, tag) are one message. Exact when every rank's spans
// come in start order (Store::Scan) and whole: the whole job or whole
// steps. A time window can cut two ranks' streams at different points and
// misnumber them. Memory: two counters per channel, nothing per message.
//
// Example: rank 0 sends twice to rank 1 (tag 5, comm 7): sends (7, 0, 1,
// 5) ordinals 0 and 1; rank 1's two receives from 0, tag 5, get ordinals
// 0 and 1 of the same channel: two messages.
#ifndef MERIDIAN_QUERY_OPS_MESSAGE_ORDINALS_H_
#define MERIDIAN_QUERY_OPS_MESSAGE_ORDINALS_H_

#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "query/ops/mpi_semantics.h"

namespace meridian {

struct MessageEnd {
  uint64_t comm = 0;
  int32_t source = -1;
  int32_t destination = -1;
  int32_t tag = 0;
  uint64_t ordinal = 0;  // within the channel, counted per direction
  bool send = false;
};

class MessageOrdinals {
 public:
  // The message end a span of `role` (kSend or kRecv) on `rank` with
  // `peer` is; nullopt if it is none (another role, or without a rank or
  // peer).
  std::optional<MessageEnd> Next(SpanRole role, int32_t rank,
                                 std::optional<int32_t> peer,
                                 std::optional<int32_t> tag, uint64_t comm);
  // The message ends a span is, in order: a send or receive's one; a
  // Sendrecv's send (peer, tag), then its receive (`receive`, if known).
  // Calls `visit` for each.
  void ForEachEnd(SpanRole role, int32_t rank, std::optional<int32_t> peer,
                  std::optional<int32_t> tag,
                  const std::optional<ReceiveHalf>& receive, uint64_t comm,
                  absl::FunctionRef<void(const MessageEnd&)> visit);

 private:
  using Channel = std::tuple<uint64_t, int32_t, int32_t, int32_t>;
  absl::flat_hash_map<Channel, std::pair<uint64_t, uint64_t>> channels_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_OPS_MESSAGE_ORDINALS_H_
