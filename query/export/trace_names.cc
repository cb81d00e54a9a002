#include "query/export/trace_names.h"

#include "absl/strings/str_cat.h"

namespace meridian {

int64_t TracePid(const ProcessInfo& process) {
  return process.rank >= 0 ? process.rank + 1 : 1000000 + process.id;
}

std::string TraceProcessName(const ProcessInfo& process) {
  return process.rank >= 0
             ? absl::StrCat("rank ", process.rank, " (", process.node, ")")
             : absl::StrCat("pid ", process.pid, " (", process.node, ")");
}

std::string TraceTrackName(const TrackInfo& track) {
  if (!track.name.empty()) return track.name;
  switch (track.kind) {
    case v1::TRACK_KIND_GPU_STREAM:
      return absl::StrCat("stream ", track.ext_id);
    case v1::TRACK_KIND_QUEUE:
      return absl::StrCat("queue ", track.ext_id);
    default:
      return absl::StrCat("thread ", track.ext_id);
  }
}

}  // namespace meridian
