#include "import/byteps_trace_reader.h"

#include <map>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "import/framework_ops.h"
#include "import/paths.h"
#include "import/time_base.h"
#include "wire/span_rules.h"

namespace meridian {
namespace {

constexpr char kFormat[] = "byteps";
constexpr std::string_view kPidPrefix = "Comm.";
constexpr int64_t kTotal = -1;  // the "total" tid, as a partition key

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (!absl::ascii_isdigit(c)) return false;
  }
  return true;
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
  // The partition key of the event's tid, kTotal for "total".
  absl::StatusOr<int64_t> PartitionKey(const TimelineEvent& e) const;
  int TrackOf(const std::string& tensor, int64_t key);
  absl::Status Finish(ImportedTrace* out);

  const ImportOptions& options_;
  std::vector<ImportedTrack> tracks_;
  std::map<std::pair<std::string, int64_t>, int> track_index_;
  std::vector<ImportedSpan> spans_;
  std::vector<int64_t> lines_;  // each span's event's line
  std::map<std::string, int64_t> skipped_by_phase_;
};

absl::StatusOr<int64_t> Reader::PartitionKey(const TimelineEvent& e) const {
  if (!e.tid) return Fail(e, "no field \"tid\" (\"total\" or a partition)");
  int64_t key = -1;
  if (e.tid->numeric) {
    key = e.tid->number;
  } else if (e.tid->text == "total") {
    return kTotal;
  } else if (AllDigits(e.tid->text)) {
    if (!absl::SimpleAtoi(e.tid->text, &key)) key = -1;
  }
  if (key < 0 || key > INT64_MAX / 2) {
    return Fail(e,
                "field \"tid\" is neither \"total\" nor a partition key "
                "(declared tensor id << 16, plus the partition index)");
  }
  return key;
}

int Reader::TrackOf(const std::string& tensor, int64_t key) {
  auto [it, added] =
      track_index_.try_emplace(std::make_pair(tensor, key), tracks_.size());
  if (added) {
    ImportedTrack t;
    t.kind = v1::TRACK_KIND_QUEUE;
    t.id = static_cast<int64_t>(tracks_.size());
    t.name = key == kTotal ? tensor
                           : absl::StrCat(tensor, " partition ", key & 0xffff);
    tracks_.push_back(std::move(t));
  }
  return it->second;
}

absl::Status Reader::Handle(TimelineEvent& e) {
  if (e.ph.empty()) return Fail(e, "no field \"ph\"");
  // Every pid is a tensor's: another timeline's (Horovod's numbers) is no
  // BytePS trace, whatever its events' phases.
  const bool tensor =
      e.pid && !e.pid->numeric &&
      e.pid->text.compare(0, kPidPrefix.size(), kPidPrefix) == 0 &&
      e.pid->text.size() > kPidPrefix.size();
  if (e.pid && !tensor) {
    return Fail(e,
                "field \"pid\" is not a BytePS tensor (\"Comm.<tensor>\"): "
                "not a BytePS comm.json?");
  }
  if (e.ph != "X") {
    ++skipped_by_phase_[e.ph];
    return absl::OkStatus();
  }
  if (!tensor) return Fail(e, "no field \"pid\" (\"Comm.<tensor>\")");
  absl::StatusOr<int64_t> key = PartitionKey(e);
  if (!key.ok()) return key.status();
  if (!e.ts) return Fail(e, "no field \"ts\"");
  if (!e.dur) return Fail(e, "no field \"dur\"");
  if (*e.dur < 0 || *e.dur > kMaxDurationNs) {
    return Fail(e, absl::StrCat("field \"dur\": ", *e.dur,
                                " ns is not between 0 and 30 days"));
  }
  const std::string& pid = e.pid->text;
  ImportedSpan span;
  if (e.name == pid) {
    span.name = "Comm";
  } else if (e.name.size() > pid.size() + 1 &&
             e.name.compare(0, pid.size(), pid) == 0 &&
             e.name[pid.size()] == '.') {
    const FrameworkOp op = BytePSStage(e.name.substr(pid.size() + 1));
    span.name = op.name;
    span.category = op.category;
  } else {
    return Fail(e, absl::StrCat("field \"name\" is neither its tensor's (\"",
                                pid.substr(0, 80),
                                "\") nor one of its "
                                "stages (\"",
                                pid.substr(0, 80), ".PUSH\"...)"));
  }
  span.track = TrackOf(pid.substr(kPidPrefix.size()), *key);
  span.start_ns = *e.ts;
  span.dur_ns = *e.dur;
  span.event = e.index;
  if (*key != kTotal) {
    span.partition = static_cast<int32_t>(*key & 0xffff);
    span.args.push_back({"partition_key", *key});
  }
  spans_.push_back(std::move(span));
  lines_.push_back(e.line);
  return absl::OkStatus();
}

absl::Status Reader::Finish(ImportedTrace* out) {
  out->format = kFormat;
  const BytePSPath path = ParseBytePSPath(options_.file);
  ProcessDesc process;
  process.node = !options_.node.empty()    ? options_.node
                 : !path.trace_dir.empty() ? path.trace_dir
                                           : options_.file;
  process.local_rank = path.local_rank;
  process.rank = options_.rank;
  if (process.rank < 0) {
    process.rank = -1;
    out->notes.push_back(
        "BytePS names its trace by local rank only: the rank is unknown "
        "(--rank sets it)");
  }
  out->processes.push_back(process);
  const std::string skipped = SkippedPhasesNote(skipped_by_phase_);
  if (!skipped.empty()) out->notes.push_back(skipped);
  absl::Status status = PlaceSpans(
      std::nullopt, options_.epoch_ns, options_.fallback_end_ns, &spans_,
      &out->notes, [&](size_t i, const std::string& problem) {
        return EventError(options_.file, spans_[i].event, lines_[i],
                          spans_[i].name, problem);
      });
  if (!status.ok()) return status;
  out->tracks = std::move(tracks_);
  out->spans = std::move(spans_);
  return absl::OkStatus();
}

absl::StatusOr<ImportedTrace> Reader::Read(std::string json) {
  TimelineSource source;
  source.file = options_.file;
  return ReadTimeline(
      std::move(json), source, [&](TimelineEvent& e) { return Handle(e); },
      [&](ImportedTrace* trace) { return Finish(trace); });
}

}  // namespace

BytePSPath ParseBytePSPath(std::string_view path) {
  BytePSPath out;
  const std::string dir = PathDirName(path);
  const std::string local = PathBaseName(dir);
  int32_t rank = 0;
  if (dir.empty() || !AllDigits(local) || local.size() > 9 ||
      !absl::SimpleAtoi(local, &rank)) {
    return out;
  }
  out.local_rank = rank;
  out.trace_dir = PathDirName(dir);
  if (out.trace_dir.empty()) out.trace_dir = ".";
  return out;
}

absl::StatusOr<ImportedTrace> ReadBytePSTrace(std::string json,
                                              const ImportOptions& options) {
  Reader reader(options);
  return reader.Read(std::move(json));
}

}  // namespace meridian
