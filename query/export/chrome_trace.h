// ChromeTraceWriter: writes a job's spans as one merged Chrome trace (Trace
// Event Format JSON, the JSON Object Format), which chrome://tracing and
// Perfetto UI load, incrementally: memory does not grow with the trace.
//
// Layout:
//   {"traceEvents":[
//     metadata: process_name "rank N (host)" and process_sort_index N per
//               selected rank; thread_name and thread_sort_index per track
//               (CPU threads first, then GPU streams, then queues);
//     spans, in the order given (Store::Scan: ascending start):
//       complete spans as "X", instants as "i", counters as "C";
//   ],"displayTimeUnit":"ns","otherData":{...}}
// pid is the rank + 1 (some viewers treat pid 0 specially; 1000000 +
// process id when the rank is unknown); tid is
// the track's position in its process, from 1. ts and dur are microseconds
// with three decimals (nanosecond precision) since the trace's origin (the
// job's first stored start, or set_origin_ns: JobClocks::epoch_ns, the
// earliest corrected start), so values stay well inside a double's exact
// range; otherData.epoch_ns holds the absolute Unix-epoch ns of ts 0, and
// --from/--to count from it (query/clocks/shown_window.h).
//
// Sink and call order: trace_writer.h.
#ifndef MERIDIAN_QUERY_EXPORT_CHROME_TRACE_H_
#define MERIDIAN_QUERY_EXPORT_CHROME_TRACE_H_

#include <cstdint>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "meridian/v1/query.pb.h"
#include "query/export/trace_writer.h"
#include "query/ops/message_ordinals.h"
#include "query/ops/mpi_semantics.h"
#include "query/ops/span_selection.h"
#include "store/store.h"

namespace meridian {

class ChromeTraceWriter : public TraceWriter {
 public:
  ChromeTraceWriter(const JobCatalog& catalog, const SpanSelection& selection,
                    Sink sink, size_t chunk_bytes = 64 * 1024);

  // The instant shown as time 0 (otherData.epoch_ns): the job's earliest
  // stored start unless set, before Begin, to another (JobClocks::epoch_ns).
  void set_origin_ns(int64_t origin_ns) override { origin_ns_ = origin_ns; }
  void set_message_flows(bool on) override { message_flows_ = on; }

  void Begin() override;
  using TraceWriter::Add;
  // The span at `start_ns` for `dur_ns` (its times on the job's merged
  // axis, JobClocks) instead of its stored times. A span with a correlation
  // id also gets one end of a flow arrow (cat "launch", id
  // "PID:CORRELATION"): its start on a CPU thread, its end on a GPU
  // stream, so the launch points at the GPU work it started.
  void Add(const StoredSpan& span, int64_t start_ns, int64_t dur_ns) override;
  // Shows a critical path as a process of its own, "critical path" (pid
  // kCriticalPathPid, sorted above the ranks): one "X" event per segment,
  // named "rank R: NAME", cat "critical_path", args rank, class, category
  // and peer. Between Begin and End.
  void AddCriticalPath(const v1::CriticalPathReply& path) override;
  static constexpr int64_t kCriticalPathPid = 999999;

  // Writes the closing part and flushes. Returns false if the sink stopped.
  bool End() override;

  int64_t events() const override { return events_; }
  // False once the sink has stopped the writer.
  bool ok() const override { return !stopped_; }

 private:
  struct TrackRef {
    int64_t pid;
    int64_t tid;
    v1::TrackKind kind;
    int32_t rank;
  };
  void AddMessageFlow(const TrackRef& track, const StoredSpan& span,
                      int64_t start_ns, int64_t dur_ns);
  void Flush();

  const JobCatalog& catalog_;
  int64_t origin_ns_;
  const SpanSelection& selection_;
  Sink sink_;
  const size_t chunk_bytes_;
  std::string buffer_;
  bool stopped_ = false;
  bool first_event_ = true;
  int64_t events_ = 0;
  absl::flat_hash_map<int64_t, TrackRef> track_ref_;
  absl::flat_hash_map<int64_t, const OpInfo*> op_;
  absl::flat_hash_map<int64_t, SpanRole> role_;  // by op id
  bool message_flows_ = true;
  MessageOrdinals messages_;
};

}  // namespace meridian

#endif  // MERIDIAN_QUERY_EXPORT_CHROME_TRACE_H_
