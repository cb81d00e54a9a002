// TraceWriter: what every trace export offers its caller (ExportTrace, the
// CLI), so that one loop feeds any format:
//
//   writer.set_origin_ns(clocks.epoch_ns());  // optional, before Begin
//   writer.Begin();
//   writer.AddCriticalPath(path);             // optional
//   store.Scan(..., [&](const StoredSpan& s) {
//     writer.Add(s, shown.start_ns, shown.dur_ns);
//     return writer.ok();
//   });
//   if (!writer.End()) ...                    // the reader went away
//
// Implementations: ChromeTraceWriter (chrome_trace.h), PerfettoTraceWriter
// (perfetto_trace.h), KinetoTraceWriter (kineto_trace.h). Each writes
// incrementally through its Sink: memory does not grow with the trace.
//
// Sink: called with consecutive pieces of the file, in order; returning
// false stops the writer (later calls do nothing, ok() turns false).
// Writers are not thread-safe; one writer is used by one thread.
#ifndef MERIDIAN_QUERY_EXPORT_TRACE_WRITER_H_
#define MERIDIAN_QUERY_EXPORT_TRACE_WRITER_H_

#include <cstdint>
#include <functional>

#include "absl/strings/string_view.h"
#include "meridian/v1/query.pb.h"
#include "store/store.h"

namespace meridian {

class TraceWriter {
 public:
  using Sink = std::function<bool(absl::string_view)>;

  virtual ~TraceWriter() = default;

  // The instant the format shows as its origin: the job's earliest stored
  // start unless set, before Begin, to another (JobClocks::epoch_ns).
  virtual void set_origin_ns(int64_t origin_ns) = 0;

  // Arrows between each matched send and receive (MessageOrdinals,
  // query/ops/mpi_semantics.h); on by default where a format has them.
  // Off for a time window, which can cut the ranks' messages unevenly.
  // Before the first Add.
  virtual void set_message_flows(bool /*on*/) {}

  virtual void Begin() = 0;
  void Add(const StoredSpan& span) { Add(span, span.start_ns, span.dur_ns); }
  // The span at `start_ns` for `dur_ns` (its times on the job's merged
  // axis, JobClocks) instead of its stored times. Spans come in ascending
  // stored start (Store::Scan); writers tolerate the small reorderings that
  // clock corrections make.
  virtual void Add(const StoredSpan& span, int64_t start_ns,
                   int64_t dur_ns) = 0;
  // The critical path as a process of its own. Between Begin and End.
  virtual void AddCriticalPath(const v1::CriticalPathReply& path) = 0;
  // Writes the closing part and flushes. Returns false if the sink stopped.
  virtual bool End() = 0;

  // Spans and critical-path segments written.
  virtual int64_t events() const = 0;
  // False once the sink has stopped the writer.
  virtual bool ok() const = 0;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_EXPORT_TRACE_WRITER_H_
