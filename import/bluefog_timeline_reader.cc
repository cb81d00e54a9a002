#include "import/bluefog_timeline_reader.h"

#include <cstring>
#include <map>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "import/framework_ops.h"
#include "import/paths.h"
#include "import/time_base.h"
#include "wire/span_rules.h"

namespace meridian {
namespace {

constexpr char kFormat[] = "bluefog";

// A (tensor, thread) pair's track as read; named in Finish, once every
// thread of the tensor is known.
struct RawTrack {
  int64_t pid = 0;
  EventId tid;
};

struct OpenSpan {
  ImportedSpan span;
  int64_t line = 0;
};

std::string TidKey(const EventId& tid) {
  return tid.numeric ? absl::StrCat("n", tid.number)
                     : absl::StrCat("s", tid.text);
}

class Reader {
 public:
  explicit Reader(const ImportOptions& options) : options_(options) {}

  absl::StatusOr<ImportedTrace> Read(std::string json);

 private:
  absl::Status Fail(const TimelineEvent& e, std::string_view what) const {
    return EventError(options_.file, e, what);
  }
  absl::Status Handle(TimelineEvent& e);
  // The event's (pid, tid) track, or an error.
  absl::StatusOr<int> TrackOf(const TimelineEvent& e);
  absl::Status End(const TimelineEvent& e, int track);
  absl::Status Finish(ImportedTrace* out);
  std::vector<ImportedTrack> NamedTracks() const;

  const ImportOptions& options_;
  std::map<int64_t, std::string> tensor_names_;
  std::vector<RawTrack> tracks_;
  std::map<std::pair<int64_t, std::string>, int> track_index_;
  std::vector<ImportedSpan> spans_;            // times relative until Finish
  std::vector<int64_t> lines_;                 // each span's event's line
  std::map<int, std::vector<OpenSpan>> open_;  // by track
  std::map<std::string, int64_t> skipped_by_phase_;
};

absl::StatusOr<int> Reader::TrackOf(const TimelineEvent& e) {
  if (!e.pid) return Fail(e, "no field \"pid\" (the tensor)");
  if (!e.pid->numeric || e.pid->number < 0) {
    return Fail(e, "field \"pid\" is not a tensor index (an integer >= 0)");
  }
  if (!e.tid) {
    return Fail(e,
                "no field \"tid\" (the thread; a Horovod timeline has none)");
  }
  auto [it, added] = track_index_.try_emplace(
      std::make_pair(e.pid->number, TidKey(*e.tid)), tracks_.size());
  if (added) tracks_.push_back(RawTrack{e.pid->number, *e.tid});
  return it->second;
}

absl::Status Reader::End(const TimelineEvent& e, int track) {
  std::vector<OpenSpan>& stack = open_[track];
  if (stack.empty()) {
    return Fail(e,
                "an \"E\" event with no open \"B\" on its pid and tid "
                "(unbalanced)");
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
  for (const ImportedArg& a : e.args) span.args.push_back(a);
  spans_.push_back(std::move(span));
  lines_.push_back(open.line);
  return absl::OkStatus();
}

absl::Status Reader::Handle(TimelineEvent& e) {
  if (e.ph.empty()) return Fail(e, "no field \"ph\"");
  // Every pid is a tensor index: another timeline's (BytePS's strings) is
  // no Bluefog timeline, whatever its events' phases.
  if (e.pid && (!e.pid->numeric || e.pid->number < 0)) {
    return Fail(e, "field \"pid\" is not a tensor index (an integer >= 0)");
  }
  if (e.ph == "M") {
    if (e.name != "process_name") return absl::OkStatus();
    const ImportedArg* a = e.Arg("name");
    const std::string* name =
        a == nullptr ? nullptr : std::get_if<std::string>(&a->value);
    if (name == nullptr) return Fail(e, "args.name is not a string");
    if (!e.pid) return Fail(e, "no field \"pid\" (the tensor)");
    tensor_names_[e.pid->number] = *name;
    return absl::OkStatus();
  }
  if (e.ph != "B" && e.ph != "E") {
    ++skipped_by_phase_[e.ph];
    return absl::OkStatus();
  }
  absl::StatusOr<int> track = TrackOf(e);
  if (!track.ok()) return track.status();
  if (!e.ts) return Fail(e, "no field \"ts\"");
  if (e.ph == "E") return End(e, *track);
  if (e.name.empty()) return Fail(e, "a \"B\" event without \"name\"");
  OpenSpan open;
  ImportedSpan& span = open.span;
  const FrameworkOp op = BluefogOp(e.name);
  span.track = *track;
  span.category = op.category;
  span.name = op.name;
  if (!op.timeline_name.empty()) {
    span.args.push_back({"timeline_name", op.timeline_name});
  }
  span.start_ns = *e.ts;
  span.event = e.index;
  for (const ImportedArg& a : e.args) span.args.push_back(a);
  open.line = e.line;
  open_[*track].push_back(std::move(open));
  return absl::OkStatus();
}

std::vector<ImportedTrack> Reader::NamedTracks() const {
  std::map<int64_t, int> threads;  // per tensor
  for (const RawTrack& raw : tracks_) ++threads[raw.pid];
  std::vector<ImportedTrack> out;
  out.reserve(tracks_.size());
  for (const RawTrack& raw : tracks_) {
    ImportedTrack t;
    t.kind = v1::TRACK_KIND_QUEUE;
    t.id = static_cast<int64_t>(out.size());
    auto name = tensor_names_.find(raw.pid);
    t.name = name != tensor_names_.end() && !name->second.empty()
                 ? name->second
                 : absl::StrCat("tensor ", raw.pid);
    if (threads[raw.pid] > 1) {
      absl::StrAppend(
          &t.name, " (thread ",
          raw.tid.numeric ? absl::StrCat(raw.tid.number) : raw.tid.text, ")");
    }
    out.push_back(std::move(t));
  }
  return out;
}

absl::Status Reader::Finish(ImportedTrace* out) {
  out->format = kFormat;
  ProcessDesc process;
  process.node =
      options_.node.empty() ? PathBaseName(options_.file) : options_.node;
  process.rank =
      options_.rank >= 0 ? options_.rank : BluefogRankFromPath(options_.file);
  if (process.rank < 0) {
    process.rank = 0;
    out->notes.push_back(
        "no rank in the file's name (tl<N>.json): taken as 0 (--rank sets "
        "it)");
  }
  out->processes.push_back(process);

  int64_t unclosed = 0;
  for (const auto& [track, stack] : open_) unclosed += stack.size();
  if (unclosed > 0) {
    out->notes.push_back(absl::StrCat(
        unclosed,
        " \"B\" events without their \"E\" (the timeline ends while they "
        "ran) were left out"));
  }
  const std::string skipped = SkippedPhasesNote(skipped_by_phase_);
  if (!skipped.empty()) out->notes.push_back(skipped);

  absl::Status status = PlaceSpans(
      std::nullopt, options_.epoch_ns, options_.fallback_end_ns, &spans_,
      &out->notes, [&](size_t i, const std::string& problem) {
        return EventError(options_.file, spans_[i].event, lines_[i],
                          spans_[i].name, problem);
      });
  if (!status.ok()) return status;
  out->tracks = NamedTracks();
  out->spans = std::move(spans_);
  return absl::OkStatus();
}

absl::StatusOr<ImportedTrace> Reader::Read(std::string json) {
  TimelineSource source;
  source.file = options_.file;
  source.escape_process_names = true;
  source.syntax_hint =
      "Bluefog writes tensor and activity names unescaped: a name with a "
      "quote or backslash can leave the file unreadable";
  return ReadTimeline(
      std::move(json), source, [&](TimelineEvent& e) { return Handle(e); },
      [&](ImportedTrace* trace) { return Finish(trace); });
}

}  // namespace

int32_t BluefogRankFromPath(std::string_view path) {
  std::string name = PathBaseName(path);
  for (const char* suffix : {".gz", ".json"}) {
    if (absl::EndsWith(name, suffix)) {
      name.resize(name.size() - strlen(suffix));
    }
  }
  size_t digits = name.size();
  while (digits > 0 && absl::ascii_isdigit(name[digits - 1])) --digits;
  int32_t rank = -1;
  if (digits == name.size() || name.size() - digits > 9 ||
      !absl::SimpleAtoi(absl::string_view(name).substr(digits), &rank)) {
    return -1;
  }
  return rank;
}

absl::StatusOr<ImportedTrace> ReadBluefogTimeline(
    std::string json, const ImportOptions& options) {
  Reader reader(options);
  return reader.Read(std::move(json));
}

}  // namespace meridian
