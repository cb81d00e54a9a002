#include "import/chrome_trace_events.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/utf8.h"
#include "import/paths.h"
#include "wire/span_rules.h"

namespace meridian {
namespace chrome {
namespace {

// Which raw pid became which process (-1: none), and the processes left out
// (a Meridian export's critical path).
struct ProcessMap {
  std::vector<int> process_of;
  std::vector<bool> skip;
};

// Notes of what was left out: "B"/"b" without their end, phases not read.
void NoteSkipped(const ReadEvents& read, ImportedTrace* out) {
  if (read.unclosed > 0) {
    out->notes.push_back(absl::StrCat(
        read.unclosed, " \"B\"/\"b\" events without their end were skipped"));
  }
  if (!read.skipped_by_phase.empty()) {
    std::string phases;
    int64_t skipped = 0;
    for (const auto& [ph, n] : read.skipped_by_phase) {
      absl::StrAppend(&phases, phases.empty() ? "" : ", ", "\"", ph, "\" ", n);
      skipped += n;
    }
    out->notes.push_back(
        absl::StrCat(skipped, " events of phases not imported (", phases, ")"));
  }
}

// Flow ends bind to slices of their thread: a start (or step), and an end
// with "bp":"e", to the innermost slice around it; an end without, to the
// next slice beginning on that thread. Both slices then share a
// correlation id (a fresh one unless one of them has it already). A
// Meridian export's message arrows are not links: the export draws them
// from the matched messages, which the import matches again.
void BindFlows(ReadEvents& read, const std::string& dialect) {
  std::map<int, std::vector<size_t>> by_track;
  for (size_t i = 0; i < read.spans.size(); ++i) {
    if (read.spans[i].kind == v1::SPAN_KIND_COMPLETE) {
      by_track[read.spans[i].track].push_back(i);
    }
  }
  for (auto& [track, list] : by_track) {
    std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      return read.spans[a].start_ns < read.spans[b].start_ns;
    });
  }
  auto bind = [&](const FlowEnd& end) -> ImportedSpan* {
    auto it = by_track.find(end.track);
    if (it == by_track.end()) return nullptr;
    const std::vector<size_t>& list = it->second;
    auto after = std::upper_bound(
        list.begin(), list.end(), end.ts,
        [&](int64_t ts, size_t i) { return ts < read.spans[i].start_ns; });
    if (!end.enclosing) {
      // The next slice starting at or after ts.
      auto next = std::lower_bound(
          list.begin(), list.end(), end.ts,
          [&](size_t i, int64_t ts) { return read.spans[i].start_ns < ts; });
      return next == list.end() ? nullptr : &read.spans[*next];
    }
    // The innermost enclosing: the latest-starting slice that covers ts.
    for (auto at = after; at != list.begin();) {
      --at;
      ImportedSpan& s = read.spans[*at];
      // Durations are at most 30 days (checked as read): no overflow.
      if (static_cast<__int128>(s.start_ns) + s.dur_ns >= end.ts) return &s;
      if (static_cast<__int128>(end.ts) - s.start_ns > kMaxDurationNs) break;
    }
    return nullptr;
  };
  uint64_t next_id = uint64_t{1} << 62;
  for (auto& [key, ends] : read.flows) {
    if (dialect == "meridian" && absl::StartsWith(key, "message\x1f")) {
      continue;
    }
    std::vector<ImportedSpan*> bound;
    for (const FlowEnd& end : ends) {
      if (ImportedSpan* s = bind(end)) bound.push_back(s);
    }
    if (bound.size() < 2) continue;
    uint64_t id = 0;
    for (ImportedSpan* s : bound) {
      if (s->correlation != 0) id = s->correlation;
    }
    if (id == 0) id = next_id++;
    for (ImportedSpan* s : bound) {
      if (s->correlation == 0) s->correlation = id;
    }
  }
}

// A Kineto trace is one process: the profiled rank's.
void KinetoProcess(const ReadEvents& read, const ImportOptions& options,
                   const std::string& default_node, ProcessMap* map,
                   ImportedTrace* out) {
  ProcessDesc p;
  p.node = default_node;
  p.rank = read.dist_rank      ? static_cast<int32_t>(*read.dist_rank)
           : options.rank >= 0 ? options.rank
                               : 0;
  for (const RawProcess& raw : read.processes) {
    if (raw.pid.numeric) p.pid = std::max(p.pid, raw.pid.number);
  }
  out->processes.push_back(p);
  std::fill(map->process_of.begin(), map->process_of.end(), 0);
}

// Each raw process as one, ranked by its name ("rank N ...") or in turn.
void NamedProcesses(const ReadEvents& read, const ImportOptions& options,
                    const std::string& dialect, const std::string& default_node,
                    ProcessMap* map, ImportedTrace* out) {
  std::vector<bool> taken;
  auto take = [&](int32_t rank) {
    if (rank >= static_cast<int32_t>(taken.size())) taken.resize(rank + 1);
    taken[rank] = true;
  };
  std::vector<int32_t> named(read.processes.size(), -1);
  std::vector<std::string> host(read.processes.size());
  for (size_t i = 0; i < read.processes.size(); ++i) {
    const std::string& name = read.processes[i].name;
    int32_t rank = -1;
    if (absl::StartsWith(name, "rank ")) {
      const size_t end = name.find(' ', 5);
      if (absl::SimpleAtoi(
              name.substr(
                  5, end == std::string::npos ? std::string::npos : end - 5),
              &rank) &&
          rank >= 0 && rank < (1 << 24)) {
        named[i] = rank;
        take(rank);
      }
    }
    const size_t open = name.find(" (");
    if (dialect == "meridian" && open != std::string::npos &&
        absl::EndsWith(name, ")")) {
      host[i] = name.substr(open + 2, name.size() - open - 3);
    }
    if (dialect == "meridian" && name == "critical path") {
      map->skip[i] = true;
    }
  }
  int32_t next = std::max(options.rank, 0);
  for (size_t i = 0; i < read.processes.size(); ++i) {
    if (map->skip[i]) continue;
    ProcessDesc p;
    p.node = !options.node.empty() ? options.node
             : !host[i].empty()    ? host[i]
                                   : default_node;
    if (named[i] >= 0) {
      p.rank = named[i];
    } else if (dialect == "meridian") {
      p.rank = -1;  // "pid P (host)": the export did not know it either
    } else {
      while (next < static_cast<int32_t>(taken.size()) && taken[next]) ++next;
      p.rank = next;
      take(next);
    }
    if (read.processes[i].pid.numeric && dialect == "chrome") {
      p.pid = read.processes[i].pid.number;
    }
    if (dialect == "meridian" &&
        absl::StartsWith(read.processes[i].name, "pid ")) {
      int64_t pid = 0;
      const std::string rest = read.processes[i].name.substr(4);
      if (absl::SimpleAtoi(rest.substr(0, rest.find(' ')), &pid)) p.pid = pid;
    }
    map->process_of[i] = static_cast<int>(out->processes.size());
    out->processes.push_back(p);
  }
}

ProcessMap MakeProcesses(const ReadEvents& read, const ImportOptions& options,
                         const std::string& dialect, ImportedTrace* out) {
  const std::string default_node =
      options.node.empty() ? PathBaseName(options.file) : options.node;
  ProcessMap map{std::vector<int>(read.processes.size(), -1),
                 std::vector<bool>(read.processes.size(), false)};
  if (dialect == "kineto") {
    KinetoProcess(read, options, default_node, &map, out);
  } else {
    NamedProcesses(read, options, dialect, default_node, &map, out);
  }
  return map;
}

// The tracks of the processes kept; the index in out->tracks of each raw
// track (-1: left out).
std::vector<int> MakeTracks(const ReadEvents& read, const std::string& dialect,
                            const ProcessMap& map, ImportedTrace* out) {
  std::vector<int> track_of(read.tracks.size(), -1);
  absl::flat_hash_map<std::string, int> ext_ids;
  for (size_t i = 0; i < read.tracks.size(); ++i) {
    const RawTrack& raw = read.tracks[i];
    if (map.skip[raw.process]) continue;
    ImportedTrack t;
    t.process = map.process_of[raw.process];
    const Key& pid = read.processes[raw.process].pid;
    if (raw.async) {
      t.kind = v1::TRACK_KIND_QUEUE;
    } else if (dialect == "meridian" && raw.sort_index &&
               *raw.sort_index / 1000000 <= 2 && *raw.sort_index >= 0) {
      t.kind = static_cast<v1::TrackKind>(*raw.sort_index / 1000000);
    } else if (raw.gpu) {
      t.kind = v1::TRACK_KIND_GPU_STREAM;
    }
    t.id = raw.tid.numeric ? raw.tid.number : static_cast<int64_t>(i);
    if (dialect == "kineto" && t.kind == v1::TRACK_KIND_GPU_STREAM &&
        pid.numeric && raw.tid.numeric) {
      t.id = pid.number * 1000000 + raw.tid.number;
      t.name = absl::StrCat("GPU ", pid.number, " stream ", raw.tid.number);
    } else if (!raw.name.empty()) {
      t.name = raw.name;
    } else {
      t.name = raw.tid.numeric ? absl::StrCat("thread ", raw.tid.number)
                               : raw.tid.text;
    }
    if (dialect == "kineto" && !pid.numeric) {
      t.name =
          absl::StrCat(pid.text.empty() ? "global" : pid.text, " ", t.name);
    }
    // Ids are unique per (process, kind): a clash takes the next free one.
    while (
        !ext_ids.try_emplace(absl::StrCat(t.process, "/", t.kind, "/", t.id), 0)
             .second) {
      ++t.id;
    }
    track_of[i] = static_cast<int>(out->tracks.size());
    out->tracks.push_back(std::move(t));
  }

  return track_of;
}

// What the file's times are relative to (ns since the Unix epoch).
int64_t TimeBase(const ReadEvents& read, const ImportOptions& options,
                 const std::string& dialect, ImportedTrace* out) {
  int64_t base = 0;
  if (dialect == "meridian" && read.epoch_ns) {
    base = *read.epoch_ns;
  } else if (dialect == "kineto" && read.base_ns) {
    base = *read.base_ns;
  } else {
    int64_t first = INT64_MAX;
    int64_t last = INT64_MIN;
    for (const ImportedSpan& s : read.spans) {
      first = std::min(first, s.start_ns);
      last = std::max<int64_t>(
          last, std::min<__int128>(static_cast<__int128>(s.start_ns) + s.dur_ns,
                                   INT64_MAX));
    }
    if (!read.spans.empty() && first < kMinTimestampNs) {
      if (options.epoch_ns) {
        base = *options.epoch_ns;
      } else if (options.fallback_end_ns > 0) {
        const __int128 b =
            static_cast<__int128>(options.fallback_end_ns) - last;
        base = b < INT64_MIN   ? INT64_MIN
               : b > INT64_MAX ? INT64_MAX
                               : static_cast<int64_t>(b);
        out->notes.push_back(absl::StrCat(
            "times are relative and the file gives no epoch: placed to end at "
            "the file's modification time (ts 0 = ",
            base, " ns since the Unix epoch; --epoch-ns sets it)"));
      }
    }
  }

  return base;
}

// The spans of the processes kept, on their tracks, at `base` + their time;
// INVALID_ARGUMENT for a time outside 2000..2100 or a duration over 30 days.
absl::Status PlaceSpans(ReadEvents& read, const ImportOptions& options,
                        int64_t base, const ProcessMap& map,
                        const std::vector<int>& track_of, ImportedTrace* out) {
  out->spans.reserve(read.spans.size());
  for (ImportedSpan& s : read.spans) {
    if (map.skip[read.tracks[s.track].process]) continue;
    s.track = track_of[s.track];
    // In 128 bits: a hostile "ts" or epoch cannot overflow the sum.
    const __int128 at = static_cast<__int128>(s.start_ns) + base;
    if (at < kMinTimestampNs || at > kMaxTimestampNs) {
      return EventError(
          options.file, s.event, s.name,
          absl::StrCat("field \"ts\": ", s.start_ns, " ns + epoch ", base,
                       " is not a time between 2000 and 2100 (an "
                       "absurd timestamp, or a relative trace: "
                       "--epoch-ns)"));
    }
    if (s.dur_ns > kMaxDurationNs) {
      return EventError(options.file, s.event, s.name,
                        absl::StrCat("field \"dur\": ", s.dur_ns,
                                     " ns is longer than 30 days"));
    }
    s.start_ns = static_cast<int64_t>(at);
    out->spans.push_back(std::move(s));
  }
  read.spans.clear();

  return absl::OkStatus();
}

// The same event twice (a file concatenated, a tool that wrote twice):
// imported once.
void DropDuplicates(ImportedTrace* out) {
  std::vector<size_t> order(out->spans.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key = [&](size_t i) {
    const ImportedSpan& s = out->spans[i];
    return std::tie(s.track, s.start_ns, s.dur_ns, s.kind, s.category, s.name,
                    s.value, s.correlation, s.bytes);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return key(a) < key(b); });
  std::vector<bool> duplicate(out->spans.size(), false);
  int64_t duplicates = 0;
  for (size_t k = 1; k < order.size(); ++k) {
    if (key(order[k]) == key(order[k - 1])) {
      duplicate[order[k]] = true;
      ++duplicates;
    }
  }
  if (duplicates > 0) {
    std::vector<ImportedSpan> kept;
    kept.reserve(out->spans.size() - duplicates);
    for (size_t i = 0; i < out->spans.size(); ++i) {
      if (!duplicate[i]) kept.push_back(std::move(out->spans[i]));
    }
    out->spans = std::move(kept);
    out->notes.push_back(absl::StrCat(
        duplicates, " duplicated events (the same event twice) imported once"));
  }
}

}  // namespace

absl::Status EventError(const std::string& file, int64_t event,
                        const std::string& name, const std::string& what) {
  std::string where = absl::StrCat(file, ": event ", event);
  if (!name.empty()) {
    absl::StrAppend(&where, " (\"", Prefix(name, 80), "\")");
  }
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

std::string Prefix(std::string_view s, size_t max) {
  return std::string(s.substr(0, Utf8Prefix(s, max)));
}

absl::Status FinishChromeTrace(ReadEvents& read, const ImportOptions& options,
                               ImportedTrace* out) {
  std::string dialect = options.format;
  if (dialect.empty()) {
    dialect = read.epoch_ns ? "meridian" : read.kineto ? "kineto" : "chrome";
  }
  out->format = dialect;
  NoteSkipped(read, out);
  BindFlows(read, dialect);
  const ProcessMap map = MakeProcesses(read, options, dialect, out);
  const std::vector<int> track_of = MakeTracks(read, dialect, map, out);
  const int64_t base = TimeBase(read, options, dialect, out);
  absl::Status placed = PlaceSpans(read, options, base, map, track_of, out);
  if (!placed.ok()) return placed;
  DropDuplicates(out);
  return absl::OkStatus();
}

}  // namespace chrome
}  // namespace meridian
