// ForEachSpanArg: the fields of a span that every trace export writes as
// its args, in one order, for each writer to encode in its format
// (chrome_trace.cc, kineto_trace.cc, perfetto_trace.cc).
//
// Contract: calls, in this order and only where the span has the field,
//   sink.Int(kBytes, bytes)        bytes != 0
//   sink.Int(kPeer, peer)          peer set
//   sink.Int(kTag, tag)            tag set
//   sink.Id(kComm, comm)           comm != 0 (a 64-bit id), then
//   sink.Count(kCommSize, size)    with it
//   sink.Count(kSeq, seq)          seq set
//   sink.Int(kStep, step)          step set
//   sink.Int(kPartition, p)        partition set
//   sink.Id(kCorrelation, id)      correlation != 0 (a 64-bit id)
//   sink.Arg(arg)                  each of the span's own args, in order
// A template: the writer's calls inline (an export writes millions).
#ifndef MERIDIAN_QUERY_EXPORT_SPAN_ARGS_H_
#define MERIDIAN_QUERY_EXPORT_SPAN_ARGS_H_

#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/json.h"
#include "store/store.h"

namespace meridian {

enum class SpanArgKey : uint8_t {
  kBytes,
  kPeer,
  kTag,
  kComm,
  kCommSize,
  kSeq,
  kStep,
  kPartition,
  kCorrelation,
};

// The key's name in every export: "bytes", "peer", ... "correlation".
inline absl::string_view SpanArgName(SpanArgKey key) {
  constexpr absl::string_view kNames[] = {"bytes", "peer",      "tag",
                                          "comm",  "comm_size", "seq",
                                          "step",  "partition", "correlation"};
  return kNames[static_cast<int>(key)];
}

// An arg's value as JSON (a string, an integer or a number), as the Chrome
// and Kineto exports write it.
inline void AppendJsonArgValue(std::string* out, const StoredArg& arg) {
  switch (arg.type) {
    case StoredArg::Type::kString:
      AppendJsonString(out, arg.str);
      break;
    case StoredArg::Type::kInt:
      absl::StrAppend(out, arg.int_value);
      break;
    case StoredArg::Type::kReal:
      AppendJsonDouble(out, arg.real_value);
      break;
  }
}

template <typename Sink>
void ForEachSpanArg(const StoredSpan& span, Sink& sink) {
  if (span.bytes != 0) sink.Int(SpanArgKey::kBytes, span.bytes);
  if (span.peer) sink.Int(SpanArgKey::kPeer, *span.peer);
  if (span.tag) sink.Int(SpanArgKey::kTag, *span.tag);
  if (span.comm != 0) {
    sink.Id(SpanArgKey::kComm, span.comm);
    sink.Count(SpanArgKey::kCommSize, span.comm_size);
  }
  if (span.seq) sink.Count(SpanArgKey::kSeq, *span.seq);
  if (span.step) sink.Int(SpanArgKey::kStep, *span.step);
  if (span.partition) sink.Int(SpanArgKey::kPartition, *span.partition);
  if (span.correlation != 0) {
    sink.Id(SpanArgKey::kCorrelation, span.correlation);
  }
  for (const StoredArg& arg : span.args) sink.Arg(arg);
}

}  // namespace meridian

#endif  // MERIDIAN_QUERY_EXPORT_SPAN_ARGS_H_
