// TimeBase: where an imported timeline's times go on the Unix epoch. The
// frameworks' timelines write microseconds since some start (Horovod's
// timeline start, Bluefog's steady clock) or since the Unix epoch
// (BytePS); spans must carry Unix-epoch nanoseconds. The rule, the Chrome
// reader's (chrome_trace_reader.h), in order:
//   1. the file gives its epoch (Horovod's pid 0 header): ts 0 is it;
//   2. the earliest time is after 2000-01-01 as Unix-epoch ns: the times
//      are absolute already;
//   3. options' epoch_ns (--epoch-ns): ts 0 is it;
//   4. options' fallback_end_ns (the file's modification time): the trace
//      is placed to end then, and a note says so;
//   5. else the times stay as they are, and PlaceSpan refuses the first.
//
// Example: a Bluefog timeline from ts 3600000000 µs (an hour after boot)
// to ts 3600010000, with no epoch and fallback_end_ns T, gets the offset
// T - 3600010000000 ns: its last span ends at T.
#ifndef MERIDIAN_IMPORT_TIME_BASE_H_
#define MERIDIAN_IMPORT_TIME_BASE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "import/imported_trace.h"

namespace meridian {

struct TimeBase {
  int64_t offset_ns = 0;  // added to every start
  std::string note;       // said when rule 4 placed the trace
};

// `first_ns` and `last_end_ns`: the earliest start and the latest end of
// the trace's spans as read (first_ns > last_end_ns: no spans).
TimeBase ChooseTimeBase(std::optional<int64_t> file_epoch_ns,
                        std::optional<int64_t> epoch_ns,
                        int64_t fallback_end_ns, int64_t first_ns,
                        int64_t last_end_ns);

// Adds `offset_ns` to `span`'s start; "" if the span then lies within the
// span rules' times (wire/span_rules.h), else what is wrong with which
// field ("field \"ts\": ..."), the span left as it was.
std::string PlaceSpan(int64_t offset_ns, ImportedSpan* span);

// Both steps for every span of `spans`: the base chosen from their times,
// its note (if any) added to `notes`, each span placed. The first span
// that does not fit ends it with fail(its index, the problem).
absl::Status PlaceSpans(
    std::optional<int64_t> file_epoch_ns, std::optional<int64_t> epoch_ns,
    int64_t fallback_end_ns, std::vector<ImportedSpan>* spans,
    std::vector<std::string>* notes,
    absl::FunctionRef<absl::Status(size_t, const std::string&)> fail);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_TIME_BASE_H_
