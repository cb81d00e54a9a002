#include "query/export/chrome_trace.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/json.h"
#include "query/export/span_args.h"
#include "query/export/trace_names.h"
#include "query/ops/category.h"
#include "query/ops/mpi_args.h"

namespace meridian {

ChromeTraceWriter::ChromeTraceWriter(const JobCatalog& catalog,
                                     const SpanSelection& selection, Sink sink,
                                     size_t chunk_bytes)
    : catalog_(catalog),
      origin_ns_(catalog.job.min_start_ns),
      selection_(selection),
      sink_(std::move(sink)),
      chunk_bytes_(chunk_bytes) {
  for (const OpInfo& op : catalog_.ops) {
    op_[op.id] = &op;
    role_[op.id] = RoleOf(op.category, op.name);
  }
}

void ChromeTraceWriter::Flush() {
  if (!stopped_ && !buffer_.empty() && !sink_(buffer_)) stopped_ = true;
  buffer_.clear();
}

void ChromeTraceWriter::Begin() {
  buffer_ = "{\"traceEvents\":[\n";
  absl::flat_hash_map<int64_t, const ProcessInfo*> process_by_id;
  for (const ProcessInfo& p : catalog_.processes) {
    process_by_id[p.id] = &p;
    if (!selection_.SelectsProcess(p.id)) continue;
    int64_t pid = TracePid(p);
    std::string name = TraceProcessName(p);
    absl::StrAppend(&buffer_, first_event_ ? "" : ",\n",
                    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", pid,
                    ",\"args\":{\"name\":");
    AppendJsonString(&buffer_, name);
    absl::StrAppend(&buffer_,
                    "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\","
                    "\"pid\":",
                    pid, ",\"args\":{\"sort_index\":", pid, "}}");
    if (p.dropped > 0) {
      // Shown under the process's name: its timeline has holes.
      absl::StrAppend(&buffer_,
                      ",\n{\"ph\":\"M\",\"name\":\"process_labels\","
                      "\"pid\":",
                      pid, ",\"args\":{\"labels\":\"", p.dropped,
                      " spans dropped (full rings)\"}}");
    }
    first_event_ = false;
  }
  // Tracks come ordered by process, kind, ext_id: number them per process.
  int64_t last_process = -1;
  int64_t tid = 0;
  for (const TrackInfo& t : catalog_.tracks) {
    if (t.process_id != last_process) {
      last_process = t.process_id;
      tid = 0;
    }
    ++tid;
    const ProcessInfo* p = process_by_id[t.process_id];
    int64_t pid = TracePid(*p);
    track_ref_[t.id] = {pid, tid, t.kind, p->rank};
    if (!selection_.SelectsProcess(t.process_id)) continue;
    absl::StrAppend(&buffer_, first_event_ ? "" : ",\n",
                    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":", pid,
                    ",\"tid\":", tid, ",\"args\":{\"name\":");
    AppendJsonString(&buffer_, TraceTrackName(t));
    absl::StrAppend(&buffer_,
                    "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\","
                    "\"pid\":",
                    pid, ",\"tid\":", tid, ",\"args\":{\"sort_index\":",
                    static_cast<int64_t>(t.kind) * 1000000 + tid, "}}");
    first_event_ = false;
  }
  Flush();
}

void ChromeTraceWriter::Add(const StoredSpan& span, int64_t start_ns,
                            int64_t dur_ns) {
  if (stopped_) return;
  const TrackRef& track = track_ref_[span.track_id];
  const OpInfo* op = op_[span.op_id];
  absl::StrAppend(&buffer_, first_event_ ? "" : ",\n", "{\"ph\":\"");
  first_event_ = false;
  switch (span.kind) {
    case v1::SPAN_KIND_INSTANT:
      buffer_.append("i\",\"s\":\"t");
      break;
    case v1::SPAN_KIND_COUNTER:
      buffer_.append("C");
      break;
    default:
      buffer_.append("X");
  }
  absl::StrAppend(&buffer_, "\",\"cat\":\"", CategoryName(op->category),
                  "\",\"name\":");
  AppendJsonString(&buffer_, op->name);
  absl::StrAppend(&buffer_, ",\"pid\":", track.pid, ",\"tid\":", track.tid,
                  ",\"ts\":");
  AppendMicros(&buffer_, start_ns - origin_ns_);
  if (span.kind == v1::SPAN_KIND_COMPLETE) {
    buffer_.append(",\"dur\":");
    AppendMicros(&buffer_, dur_ns);
  }
  buffer_.append(",\"args\":{");
  bool first = true;
  auto field = [&](absl::string_view key) {
    absl::StrAppend(&buffer_, first ? "" : ",");
    AppendJsonString(&buffer_, key);
    buffer_.push_back(':');
    first = false;
  };
  if (span.kind == v1::SPAN_KIND_COUNTER) {
    field(op->name);
    AppendJsonDouble(&buffer_, span.value);
  }
  // Numbers as numbers; 64-bit ids, which do not fit a JSON number's exact
  // range, as hex strings.
  struct Json {
    std::string& out;
    decltype(field)& key;
    void Int(SpanArgKey k, int64_t v) {
      key(SpanArgName(k)), absl::StrAppend(&out, v);
    }
    void Count(SpanArgKey k, uint64_t v) {
      key(SpanArgName(k)), absl::StrAppend(&out, v);
    }
    void Id(SpanArgKey k, uint64_t v) {
      key(SpanArgName(k));
      absl::StrAppend(&out, "\"0x", absl::Hex(v), "\"");
    }
    void Arg(const StoredArg& arg) {
      key(arg.key);
      AppendJsonArgValue(&out, arg);
    }
  } json{buffer_, field};
  ForEachSpanArg(span, json);
  buffer_.append("}}");
  ++events_;
  if (span.correlation != 0 && span.kind == v1::SPAN_KIND_COMPLETE &&
      track.kind != v1::TRACK_KIND_QUEUE) {
    // "s" binds to the CPU slice enclosing its time, "f" with "bp":"e" to
    // the GPU slice enclosing its time: both at the slice's start.
    absl::StrAppend(
        &buffer_, ",\n{\"ph\":\"",
        track.kind == v1::TRACK_KIND_THREAD ? "s" : "f\",\"bp\":\"e",
        "\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":\"", track.pid, ":",
        absl::Hex(span.correlation), "\",\"pid\":", track.pid,
        ",\"tid\":", track.tid, ",\"ts\":");
    AppendMicros(&buffer_, start_ns - origin_ns_);
    buffer_.append("}");
  }
  if (message_flows_) AddMessageFlow(track, span, start_ns, dur_ns);
  if (buffer_.size() >= chunk_bytes_) Flush();
}

// A matched message's arrow: "s" at the send's start, "f" (bound to the
// enclosing slice) at the receive's last nanosecond, one id per message (a
// Sendrecv has both: the start of the arrow it sends, the end of the one it
// received). A
// blocking receive often starts before its send; it ends after the send
// started (the export keeps that order), so the arrow points forward.
void ChromeTraceWriter::AddMessageFlow(const TrackRef& track,
                                       const StoredSpan& span, int64_t start_ns,
                                       int64_t dur_ns) {
  const SpanRole role = role_[span.op_id];
  const std::optional<ReceiveHalf> receive =
      role == SpanRole::kSendRecv ? SendrecvReceive(span) : std::nullopt;
  messages_.ForEachEnd(
      role, track.rank, span.peer, span.tag, receive, span.comm,
      [&](const MessageEnd& m) {
        absl::StrAppend(&buffer_, ",\n{\"ph\":\"",
                        m.send ? "s" : "f\",\"bp\":\"e",
                        "\",\"cat\":\"message\",\"name\":\"message\",\"id\":\"",
                        absl::Hex(m.comm), ":", m.source, ">", m.destination,
                        ":", m.tag, "#", m.ordinal, "\",\"pid\":", track.pid,
                        ",\"tid\":", track.tid, ",\"ts\":");
        const int64_t at =
            m.send ? start_ns : start_ns + std::max<int64_t>(0, dur_ns - 1);
        AppendMicros(&buffer_, at - origin_ns_);
        buffer_.append("}");
      });
}

void ChromeTraceWriter::AddCriticalPath(const v1::CriticalPathReply& path) {
  absl::StrAppend(
      &buffer_, first_event_ ? "" : ",\n",
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", kCriticalPathPid,
      ",\"args\":{\"name\":\"critical path\"}},\n"
      "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":",
      kCriticalPathPid,
      ",\"args\":{\"sort_index\":-1}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":",
      kCriticalPathPid, ",\"tid\":1,\"args\":{\"name\":\"critical path\"}}");
  first_event_ = false;
  for (const v1::PathSegment& s : path.segments()) {
    buffer_.append(",\n{\"ph\":\"X\",\"cat\":\"critical_path\",\"name\":");
    AppendJsonString(&buffer_,
                     absl::StrCat("rank ", s.rank(), ": ",
                                  s.name().empty() ? "(untraced)" : s.name()));
    absl::StrAppend(&buffer_, ",\"pid\":", kCriticalPathPid,
                    ",\"tid\":1,\"ts\":");
    AppendMicros(&buffer_, s.start_ns() - origin_ns_);
    buffer_.append(",\"dur\":");
    AppendMicros(&buffer_, s.dur_ns());
    absl::StrAppend(&buffer_, ",\"args\":{\"rank\":", s.rank(), ",\"class\":\"",
                    TimeClassName(s.time_class()), "\"");
    if (s.category() != v1::CATEGORY_UNSPECIFIED) {
      absl::StrAppend(&buffer_, ",\"category\":\"", CategoryName(s.category()),
                      "\"");
    }
    if (s.has_peer()) absl::StrAppend(&buffer_, ",\"peer\":", s.peer());
    buffer_.append("}}");
    ++events_;
    if (buffer_.size() >= chunk_bytes_) Flush();
  }
}

bool ChromeTraceWriter::End() {
  absl::StrAppend(&buffer_, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{",
                  "\"job\":");
  AppendJsonString(&buffer_, catalog_.job.name);
  absl::StrAppend(&buffer_, ",\"epoch_ns\":", origin_ns_,
                  ",\"spans_dropped\":", catalog_.job.spans_dropped,
                  ",\"generator\":\"meridian\"}}\n");
  Flush();
  return !stopped_;
}

}  // namespace meridian
