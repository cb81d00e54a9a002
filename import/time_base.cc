#include "import/time_base.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "wire/span_rules.h"

namespace meridian {

TimeBase ChooseTimeBase(std::optional<int64_t> file_epoch_ns,
                        std::optional<int64_t> epoch_ns,
                        int64_t fallback_end_ns, int64_t first_ns,
                        int64_t last_end_ns) {
  TimeBase base;
  if (file_epoch_ns) {
    base.offset_ns = *file_epoch_ns;
    return base;
  }
  if (first_ns > last_end_ns || first_ns >= kMinTimestampNs) return base;
  if (epoch_ns) {
    base.offset_ns = *epoch_ns;
  } else if (fallback_end_ns > 0) {
    const __int128 offset =
        static_cast<__int128>(fallback_end_ns) - last_end_ns;
    base.offset_ns = offset < INT64_MIN   ? INT64_MIN
                     : offset > INT64_MAX ? INT64_MAX
                                          : static_cast<int64_t>(offset);
    base.note = absl::StrCat(
        "times are relative and the file gives no epoch: placed to end at the "
        "file's modification time (ts 0 = ",
        base.offset_ns, " ns since the Unix epoch; --epoch-ns sets it)");
  }
  return base;
}

std::string PlaceSpan(int64_t offset_ns, ImportedSpan* span) {
  const __int128 start = static_cast<__int128>(span->start_ns) + offset_ns;
  if (start < kMinTimestampNs || start > kMaxTimestampNs) {
    return absl::StrCat("field \"ts\": ", span->start_ns, " ns + epoch ",
                        offset_ns,
                        " ns is not a time between 2000 and 2100 (an absurd "
                        "timestamp, or a relative trace: --epoch-ns)");
  }
  if (span->dur_ns < 0 || span->dur_ns > kMaxDurationNs) {
    return absl::StrCat("field \"dur\": ", span->dur_ns,
                        " ns is not between 0 and 30 days");
  }
  if (start + span->dur_ns > kMaxTimestampNs) {
    return "field \"dur\": the span ends after 2100";
  }
  span->start_ns = static_cast<int64_t>(start);
  return "";
}

absl::Status PlaceSpans(
    std::optional<int64_t> file_epoch_ns, std::optional<int64_t> epoch_ns,
    int64_t fallback_end_ns, std::vector<ImportedSpan>* spans,
    std::vector<std::string>* notes,
    absl::FunctionRef<absl::Status(size_t, const std::string&)> fail) {
  int64_t first = INT64_MAX;
  int64_t last = INT64_MIN;
  for (const ImportedSpan& s : *spans) {
    first = std::min(first, s.start_ns);
    last = std::max<int64_t>(
        last, std::min<__int128>(static_cast<__int128>(s.start_ns) + s.dur_ns,
                                 INT64_MAX));
  }
  const TimeBase base =
      ChooseTimeBase(file_epoch_ns, epoch_ns, fallback_end_ns, first, last);
  if (!base.note.empty()) notes->push_back(base.note);
  for (size_t i = 0; i < spans->size(); ++i) {
    const std::string problem = PlaceSpan(base.offset_ns, &(*spans)[i]);
    if (!problem.empty()) return fail(i, problem);
  }
  return absl::OkStatus();
}

}  // namespace meridian
