// What the Chrome trace reader (chrome_trace_reader.h) read of a file, and
// how that becomes an ImportedTrace: its processes and tracks named, its
// flows bound to slices, its times placed, its duplicated events dropped.
// Only the reader's files include it.
#ifndef MERIDIAN_IMPORT_CHROME_TRACE_EVENTS_H_
#define MERIDIAN_IMPORT_CHROME_TRACE_EVENTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "import/chrome_trace_reader.h"
#include "import/imported_trace.h"

namespace meridian {
namespace chrome {

// A pid or tid as the file wrote it: a number or a string.
struct Key {
  bool numeric = false;
  int64_t number = 0;
  std::string text;
  std::string Id() const {
    return numeric ? absl::StrCat("n", number) : absl::StrCat("s", text);
  }
};

struct RawProcess {
  Key pid;
  std::string name;
};

struct RawTrack {
  int process = 0;
  Key tid;
  std::string name;
  std::optional<int64_t> sort_index;
  bool gpu = false;    // holds GPU activity
  bool async = false;  // a nestable-async category's track
};

struct FlowEnd {
  int track;
  int64_t ts;
  char phase;      // 's', 't' or 'f'
  bool enclosing;  // "bp":"e", or a start/step (binds to the slice around)
};

// Everything read of the file, times still relative to it.
struct ReadEvents {
  // What the top level said.
  bool kineto = false;
  std::optional<int64_t> epoch_ns;  // otherData.epoch_ns (Meridian)
  std::optional<int64_t> base_ns;   // baseTimeNanoseconds (Kineto)
  std::optional<int64_t> dist_rank;
  std::vector<RawProcess> processes;
  std::vector<RawTrack> tracks;
  std::vector<ImportedSpan> spans;
  std::map<std::string, std::vector<FlowEnd>> flows;
  std::map<std::string, int64_t> skipped_by_phase;
  int64_t unclosed = 0;  // "B"/"b" events without their end
};

// INVALID_ARGUMENT naming the file, the event (by index) and its name.
absl::Status EventError(const std::string& file, int64_t event,
                        const std::string& name, const std::string& what);
// The longest prefix of `s` of at most `max` bytes that ends on a whole
// UTF-8 character.
std::string Prefix(std::string_view s, size_t max);

// `read` as an ImportedTrace (its spans moved out).
absl::Status FinishChromeTrace(ReadEvents& read, const ImportOptions& options,
                               ImportedTrace* out);

}  // namespace chrome
}  // namespace meridian

#endif  // MERIDIAN_IMPORT_CHROME_TRACE_EVENTS_H_
