#include "query/export/replay_trace.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/json.h"
#include "query/ops/category.h"

namespace meridian {
namespace {

constexpr size_t kChunkBytes = 64 * 1024;

}  // namespace

bool WriteReplayTrace(const JobSpans& spans, const ReplayTimes& times,
                      const std::function<bool(absl::string_view)>& sink) {
  const std::vector<JobSpan>& all = spans.spans();
  const std::vector<JobTrack>& tracks = spans.tracks();
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < all.size(); ++i) {
    origin = std::min({origin, all[i].start, times.start[i]});
  }
  if (all.empty()) origin = 0;
  // The measured pid of each track's process, and each track's tid.
  std::vector<int64_t> pid(tracks.size()), tid(tracks.size());
  std::vector<int64_t> next_tid(spans.catalog().processes.size() + 1, 1);
  std::string out = "{\"traceEvents\":[";
  bool first = true;
  auto event = [&](const std::string& text) {
    absl::StrAppend(&out, first ? "\n" : ",\n", text);
    first = false;
  };
  auto flush = [&](bool last) {
    if (!last && out.size() < kChunkBytes) return true;
    const bool ok = sink(out);
    out.clear();
    return ok;
  };
  std::vector<char> named(spans.catalog().processes.size(), 0);
  for (size_t k = 0; k < tracks.size(); ++k) {
    const JobTrack& t = tracks[k];
    const int64_t process = std::max(t.process, 0);
    pid[k] = t.rank >= 0 ? 2 * int64_t{t.rank} + 1 : 1000001 + 2 * process;
    tid[k] = next_tid[process]++;
    for (int side = 0; side < 2; ++side) {
      const int64_t p = pid[k] + side;
      if (!named[process]) {
        std::string name = t.rank >= 0 ? absl::StrCat("rank ", t.rank)
                                       : absl::StrCat("process ", process);
        absl::StrAppend(&name, side ? " predicted" : " measured");
        std::string meta =
            absl::StrCat("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":", p,
                         ",\"args\":{\"name\":");
        AppendJsonString(&meta, name);
        absl::StrAppend(&meta,
                        "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\","
                        "\"pid\":",
                        p, ",\"args\":{\"sort_index\":", p, "}}");
        event(meta);
      }
      std::string meta =
          absl::StrCat("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":", p,
                       ",\"tid\":", tid[k], ",\"args\":{\"name\":");
      AppendJsonString(&meta, t.name);
      meta += "}}";
      event(meta);
    }
    named[process] = 1;
  }
  for (size_t i = 0; i < all.size(); ++i) {
    const JobSpan& s = all[i];
    for (int side = 0; side < 2; ++side) {
      const int64_t start = side ? times.start[i] : s.start;
      const int64_t end = side ? times.end[i] : s.end;
      std::string e = "{\"ph\":\"X\",\"name\":";
      AppendJsonString(&e, spans.name(s));
      absl::StrAppend(&e, ",\"cat\":\"", CategoryName(s.category),
                      "\",\"pid\":", pid[s.track] + side,
                      ",\"tid\":", tid[s.track], ",\"ts\":");
      AppendMicros(&e, start - origin);
      e += ",\"dur\":";
      AppendMicros(&e, std::max<int64_t>(end - start, 0));
      e += "}";
      event(e);
    }
    if (!flush(false)) return false;
  }
  absl::StrAppend(&out,
                  "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"epoch_ns\":",
                  origin, "}}\n");
  return flush(true);
}

}  // namespace meridian
