#include "wire/batch_spans.h"

#include <algorithm>
#include <limits>

namespace meridian {

int64_t SpanCount(const v1::Batch& batch) {
  int64_t n = batch.spans_size();
  for (const v1::SpanChunk& chunk : batch.chunks()) n += chunk.count();
  return n;
}

std::vector<std::pair<std::string, int64_t>> SpansByJob(
    const v1::Batch& batch) {
  std::vector<std::pair<std::string, int64_t>> out;
  const auto add = [&](uint32_t track, int64_t n) {
    std::string job;
    if (track < static_cast<uint32_t>(batch.tracks_size())) {
      const uint32_t process = batch.tracks(static_cast<int>(track)).process();
      if (process < static_cast<uint32_t>(batch.processes_size())) {
        const uint32_t name = batch.processes(static_cast<int>(process)).job();
        if (name < static_cast<uint32_t>(batch.strings_size())) {
          job = batch.strings(static_cast<int>(name));
        }
      }
    }
    for (auto& [known, spans] : out) {
      if (known == job) {
        spans += n;
        return;
      }
    }
    out.emplace_back(std::move(job), n);
  };
  for (const v1::Span& span : batch.spans()) add(span.track(), 1);
  for (const v1::SpanChunk& chunk : batch.chunks()) {
    add(chunk.track(), chunk.count());
  }
  return out;
}

int64_t MinStart(const v1::Batch& batch) {
  int64_t min = std::numeric_limits<int64_t>::max();
  for (const v1::Span& span : batch.spans()) {
    min = std::min(min, span.start_ns());
  }
  for (const v1::SpanChunk& chunk : batch.chunks()) {
    min = std::min(min, chunk.first_start_ns());
  }
  return min == std::numeric_limits<int64_t>::max() ? 0 : min;
}

void AppendSpanMessage(const v1::Span& span, SpanColumns* out) {
  SpanColumns& c = *out;
  const size_t i = c.Add(span.start_ns(), span.dur_ns(), span.name(),
                         span.category(), span.kind());
  uint8_t flags = 0;
  if (span.has_peer()) flags |= SpanColumns::kHasPeer;
  if (span.has_tag()) flags |= SpanColumns::kHasTag;
  if (span.has_seq()) flags |= SpanColumns::kHasSeq;
  if (span.has_step()) flags |= SpanColumns::kHasStep;
  if (span.has_partition()) flags |= SpanColumns::kHasPartition;
  c.flags[i] = flags;
  c.bytes[i] = span.bytes();
  c.peer[i] = span.peer();
  c.tag[i] = span.tag();
  c.comm[i] = span.comm();
  c.comm_size[i] = span.comm_size();
  c.seq[i] = span.seq();
  c.step[i] = span.step();
  c.partition[i] = span.partition();
  c.correlation[i] = span.correlation();
  c.value[i] = span.kind() == v1::SPAN_KIND_COUNTER ? span.value() : 0;
  for (const v1::Arg& arg : span.args()) {
    ChunkArg out_arg;
    out_arg.key = arg.key();
    switch (arg.value_case()) {
      case v1::Arg::kStr:
        out_arg.type = ChunkArg::Type::kString;
        out_arg.value = arg.str();
        break;
      case v1::Arg::kReal:
        out_arg.type = ChunkArg::Type::kReal;
        out_arg.real = arg.real();
        break;
      default:
        out_arg.value = arg.int_();
        break;
    }
    c.AddArg(out_arg);
  }
}

}  // namespace meridian
