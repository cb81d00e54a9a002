#include "import/horovod_timeline_reader.h"

#include <map>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "import/framework_ops.h"
#include "import/paths.h"
#include "import/time_base.h"
#include "wire/span_rules.h"

namespace meridian {
namespace {

constexpr char kFormat[] = "horovod";

// A B not yet closed by its E.
struct OpenSpan {
  ImportedSpan span;
  int64_t line = 0;
  // The communication spans closed inside it (kept by the outermost open
  // span of the pid, the response, only): they get its tensor's bytes.
  std::vector<size_t> collectives;
};

class Reader {
 public:
  explicit Reader(const ImportOptions& options) : options_(options) {}

  absl::StatusOr<ImportedTrace> Read(std::string json);

 private:
  absl::Status Fail(const TimelineEvent& e, std::string_view what) const {
    return EventError(options_.file, e, what);
  }
  absl::Status Handle(TimelineEvent& e);
  absl::Status Metadata(const TimelineEvent& e);
  absl::Status Begin(TimelineEvent& e);
  absl::Status End(TimelineEvent& e);
  absl::Status Complete(TimelineEvent& e);
  absl::Status Instant(TimelineEvent& e);
  // The event's pid as a tensor index, or an error.
  absl::StatusOr<int64_t> Tensor(const TimelineEvent& e) const;
  int TrackOf(int64_t pid);
  ImportedSpan MakeSpan(const TimelineEvent& e, int track, v1::SpanKind kind);
  // Adds `span` of `pid`: a communication span inside an open response is
  // remembered by the response.
  void Add(int64_t pid, ImportedSpan span, int64_t line);
  absl::Status Finish(ImportedTrace* out);

  const ImportOptions& options_;
  std::optional<int64_t> epoch_ns_;  // pid 0's header
  std::map<int64_t, std::string> tensor_names_;
  std::vector<ImportedTrack> tracks_;
  std::map<int64_t, int> track_of_pid_;
  int cycle_track_ = -1;
  std::vector<ImportedSpan> spans_;  // times relative until Finish
  std::vector<int64_t> lines_;       // each span's event's line
  std::map<int64_t, std::vector<OpenSpan>> open_;  // by pid
  std::map<std::string, int64_t> skipped_by_phase_;
};

absl::StatusOr<int64_t> Reader::Tensor(const TimelineEvent& e) const {
  if (!e.pid) return Fail(e, "no field \"pid\" (the tensor)");
  if (!e.pid->numeric || e.pid->number < 0) {
    return Fail(e, "field \"pid\" is not a tensor index (an integer >= 0)");
  }
  return e.pid->number;
}

int Reader::TrackOf(int64_t pid) {
  auto [it, added] = track_of_pid_.try_emplace(pid, tracks_.size());
  if (added) {
    ImportedTrack t;
    t.kind = v1::TRACK_KIND_QUEUE;
    t.id = pid;
    tracks_.push_back(std::move(t));
  }
  return it->second;
}

ImportedSpan Reader::MakeSpan(const TimelineEvent& e, int track,
                              v1::SpanKind kind) {
  ImportedSpan s;
  s.track = track;
  s.kind = kind;
  s.start_ns = *e.ts;
  s.event = e.index;
  const FrameworkOp op = HorovodOp(e.name);
  s.category = op.category;
  s.name = op.name;
  if (!op.timeline_name.empty()) {
    s.args.push_back({"timeline_name", op.timeline_name});
  }
  return s;
}

void Reader::Add(int64_t pid, ImportedSpan span, int64_t line) {
  if (span.category != v1::CATEGORY_USER) {
    auto open = open_.find(pid);
    if (open != open_.end() && !open->second.empty()) {
      open->second.front().collectives.push_back(spans_.size());
    }
  }
  spans_.push_back(std::move(span));
  lines_.push_back(line);
}

absl::Status Reader::Metadata(const TimelineEvent& e) {
  if (e.name != "process_name") return absl::OkStatus();  // sort indexes
  absl::StatusOr<int64_t> pid = Tensor(e);
  if (!pid.ok()) return pid.status();
  if (const ImportedArg* a = e.Arg("start_time_since_epoch_in_micros")) {
    const int64_t* micros = std::get_if<int64_t>(&a->value);
    if (micros == nullptr || *micros < kMinTimestampNs / 1000 ||
        *micros > kMaxTimestampNs / 1000) {
      return Fail(e,
                  "args.start_time_since_epoch_in_micros is not an integer "
                  "number of microseconds between 2000 and 2100");
    }
    epoch_ns_ = *micros * 1000;
  }
  if (const ImportedArg* a = e.Arg("name")) {
    const std::string* name = std::get_if<std::string>(&a->value);
    if (name == nullptr) return Fail(e, "args.name is not a string");
    tensor_names_[*pid] = *name;
  }
  return absl::OkStatus();
}

absl::Status Reader::Begin(TimelineEvent& e) {
  absl::StatusOr<int64_t> pid = Tensor(e);
  if (!pid.ok()) return pid.status();
  if (e.name.empty()) return Fail(e, "a \"B\" event without \"name\"");
  OpenSpan open;
  open.span = MakeSpan(e, TrackOf(*pid), v1::SPAN_KIND_COMPLETE);
  open.line = e.line;
  open_[*pid].push_back(std::move(open));
  return absl::OkStatus();
}

// Closes the innermost open B of the pid. The E that ends a response
// carries the tensor's dtype and shape: its bytes go on the response and
// on the communication spans inside it.
absl::Status Reader::End(TimelineEvent& e) {
  absl::StatusOr<int64_t> pid = Tensor(e);
  if (!pid.ok()) return pid.status();
  std::vector<OpenSpan>& stack = open_[*pid];
  if (stack.empty()) {
    return Fail(e, absl::StrCat("an \"E\" event with no open \"B\" on pid ",
                                *pid, " (unbalanced)"));
  }
  OpenSpan open = std::move(stack.back());
  stack.pop_back();
  ImportedSpan& span = open.span;
  if (*e.ts < span.start_ns) {
    return Fail(e, absl::StrCat("field \"ts\": ends before its \"B\" (event ",
                                span.event, ") began"));
  }
  if (static_cast<__int128>(*e.ts) - span.start_ns > kMaxDurationNs) {
    return Fail(e, absl::StrCat("field \"ts\": more than 30 days after its "
                                "\"B\" (event ",
                                span.event, ")"));
  }
  span.dur_ns = *e.ts - span.start_ns;
  const ImportedArg* dtype = e.Arg("dtype");
  const ImportedArg* shape = e.Arg("shape");
  if (dtype != nullptr && shape != nullptr) {
    const std::string* d = std::get_if<std::string>(&dtype->value);
    const std::string* s = std::get_if<std::string>(&shape->value);
    const int64_t bytes =
        d != nullptr && s != nullptr ? HorovodTensorBytes(*d, *s) : 0;
    span.bytes = bytes;
    for (const size_t i : open.collectives) spans_[i].bytes = bytes;
  }
  for (const ImportedArg& a : e.args) span.args.push_back(a);
  Add(*pid, std::move(span), open.line);
  return absl::OkStatus();
}

// The ready ticks: X named with a rank number, dur 0. Any other X is a
// span of its own.
absl::Status Reader::Complete(TimelineEvent& e) {
  absl::StatusOr<int64_t> pid = Tensor(e);
  if (!pid.ok()) return pid.status();
  if (!e.dur) return Fail(e, "an \"X\" event without \"dur\"");
  if (*e.dur < 0 || *e.dur > kMaxDurationNs) {
    return Fail(e, absl::StrCat("field \"dur\": ", *e.dur,
                                " ns is not between 0 and 30 days"));
  }
  const int track = TrackOf(*pid);
  int32_t rank = 0;
  if (*e.dur == 0 && absl::SimpleAtoi(e.name, &rank) && rank >= 0 &&
      absl::ascii_isdigit(e.name.front())) {
    ImportedSpan tick;
    tick.track = track;
    tick.kind = v1::SPAN_KIND_INSTANT;
    tick.category = v1::CATEGORY_USER;
    tick.name = absl::StrCat("rank ", rank, " ready");
    tick.start_ns = *e.ts;
    tick.event = e.index;
    tick.args.push_back({"rank", static_cast<int64_t>(rank)});
    Add(*pid, std::move(tick), e.line);
    return absl::OkStatus();
  }
  if (e.name.empty()) return Fail(e, "an \"X\" event without \"name\"");
  ImportedSpan span = MakeSpan(e, track, v1::SPAN_KIND_COMPLETE);
  span.dur_ns = *e.dur;
  Add(*pid, std::move(span), e.line);
  return absl::OkStatus();
}

// CYCLE_START has no pid: the background thread's.
absl::Status Reader::Instant(TimelineEvent& e) {
  int track = 0;
  if (e.pid) {
    absl::StatusOr<int64_t> pid = Tensor(e);
    if (!pid.ok()) return pid.status();
    track = TrackOf(*pid);
  } else {
    if (cycle_track_ < 0) {
      cycle_track_ = static_cast<int>(tracks_.size());
      ImportedTrack t;
      t.kind = v1::TRACK_KIND_THREAD;
      t.id = 0;
      t.name = "Horovod background thread";
      tracks_.push_back(std::move(t));
    }
    track = cycle_track_;
  }
  if (e.name.empty()) return Fail(e, "an instant without \"name\"");
  ImportedSpan span;
  span.track = track;
  span.kind = v1::SPAN_KIND_INSTANT;
  span.category = v1::CATEGORY_USER;
  span.name = e.name;
  span.start_ns = *e.ts;
  span.event = e.index;
  Add(-1, std::move(span), e.line);
  return absl::OkStatus();
}

absl::Status Reader::Handle(TimelineEvent& e) {
  if (e.ph.empty()) return Fail(e, "no field \"ph\"");
  const char ph = e.ph.size() == 1 ? e.ph[0] : '?';
  if (ph == 'M') return Metadata(e);
  if (ph != 'B' && ph != 'E' && ph != 'X' && ph != 'i' && ph != 'I') {
    ++skipped_by_phase_[e.ph];
    return absl::OkStatus();
  }
  if (!e.ts) return Fail(e, "no field \"ts\"");
  switch (ph) {
    case 'B':
      return Begin(e);
    case 'E':
      return End(e);
    case 'X':
      return Complete(e);
    default:
      return Instant(e);
  }
}

absl::Status Reader::Finish(ImportedTrace* out) {
  out->format = kFormat;
  ProcessDesc process;
  process.node =
      options_.node.empty() ? PathBaseName(options_.file) : options_.node;
  process.rank = options_.rank >= 0 ? options_.rank : 0;
  out->processes.push_back(process);

  int64_t unclosed = 0;
  for (const auto& [pid, stack] : open_) unclosed += stack.size();
  if (unclosed > 0) {
    out->notes.push_back(absl::StrCat(
        unclosed,
        " \"B\" events without their \"E\" (the timeline ends while they "
        "ran) were left out"));
  }
  const std::string skipped = SkippedPhasesNote(skipped_by_phase_);
  if (!skipped.empty()) out->notes.push_back(skipped);

  absl::Status status = PlaceSpans(
      epoch_ns_, options_.epoch_ns, options_.fallback_end_ns, &spans_,
      &out->notes, [&](size_t i, const std::string& problem) {
        return EventError(options_.file, spans_[i].event, lines_[i],
                          spans_[i].name, problem);
      });
  if (!status.ok()) return status;

  for (const auto& [pid, track] : track_of_pid_) {
    auto name = tensor_names_.find(pid);
    tracks_[track].name = name != tensor_names_.end() && !name->second.empty()
                              ? name->second
                              : absl::StrCat("tensor ", pid);
  }
  out->tracks = std::move(tracks_);
  out->spans = std::move(spans_);
  return absl::OkStatus();
}

absl::StatusOr<ImportedTrace> Reader::Read(std::string json) {
  TimelineSource source;
  source.file = options_.file;
  source.escape_process_names = true;
  source.syntax_hint =
      "Horovod writes tensor names unescaped: a name with a quote or "
      "backslash can leave the file unreadable";
  return ReadTimeline(
      std::move(json), source, [&](TimelineEvent& e) { return Handle(e); },
      [&](ImportedTrace* trace) { return Finish(trace); });
}

int64_t DtypeBytes(std::string_view dtype) {
  std::string type =
      absl::AsciiStrToLower(absl::string_view(dtype.data(), dtype.size()));
  if (type.rfind("horovod_", 0) == 0) type = type.substr(8);
  static const std::pair<const char*, int64_t> kSizes[] = {
      {"uint8", 1},   {"int8", 1},    {"bool", 1},     {"uint16", 2},
      {"int16", 2},   {"float16", 2}, {"bfloat16", 2}, {"int32", 4},
      {"float32", 4}, {"int64", 8},   {"float64", 8},
  };
  for (const auto& [name, bytes] : kSizes) {
    if (type == name) return bytes;
  }
  return 0;
}

}  // namespace

int64_t HorovodTensorBytes(std::string_view dtype, std::string_view shape) {
  const int64_t size = DtypeBytes(dtype);
  if (size == 0) return 0;
  absl::string_view dims(shape.data(), shape.size());
  dims = absl::StripAsciiWhitespace(dims);
  if (dims.size() < 2 || dims.front() != '[' || dims.back() != ']') return 0;
  dims = absl::StripAsciiWhitespace(dims.substr(1, dims.size() - 2));
  int64_t bytes = size;
  if (dims.empty()) return bytes;  // a scalar
  for (absl::string_view dim : absl::StrSplit(dims, ',')) {
    int64_t n = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(dim), &n) || n < 0) {
      return 0;
    }
    if (n != 0 && bytes > (int64_t{1} << 56) / n) return 0;
    bytes *= n;
  }
  return bytes < (int64_t{1} << 56) ? bytes : 0;
}

absl::StatusOr<ImportedTrace> ReadHorovodTimeline(
    std::string json, const ImportOptions& options) {
  Reader reader(options);
  return reader.Read(std::move(json));
}

}  // namespace meridian
