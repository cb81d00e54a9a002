// TimelineEvents: the events of a training framework's Chrome-JSON timeline
// (Horovod, BytePS, Bluefog), read one at a time for that framework's
// importer, which gives them their meaning. What the three share lives
// here: the containers (an array, closed or never closed, or an object's
// "traceEvents"), the fields they write, exact microsecond times, error
// messages that name the file, event, line and field, and names that the
// frameworks write without JSON escaping.
//
// Unescaped names: Horovod and Bluefog write a tensor's name between
// quotes as it is, so a name holding `"` or `\` breaks the JSON. Before
// parsing, each `M process_name` record as they write it,
//   {"name": "process_name", "ph": "M", "pid": 3, "args": {"name": "a"b\c"}},
// has its name taken as everything up to the `"}}` that ends the record
// (on its line: they write one record a line) and, if that is not a valid
// JSON string, escaped as written (a"b\c). A name that is valid JSON
// already is read as JSON. A name holding `"}}` and a comma, or a line
// break, cannot be told from the record's end: the file fails to parse,
// and the message says why that may be. The scan is linear in the text.
//
// Not thread-safe per call; calls are independent.
#ifndef MERIDIAN_IMPORT_TIMELINE_EVENTS_H_
#define MERIDIAN_IMPORT_TIMELINE_EVENTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "import/import_options.h"
#include "import/imported_trace.h"

namespace meridian {

// A pid or tid as the file wrote it: a number or a string.
struct EventId {
  bool numeric = false;
  int64_t number = 0;
  std::string text;
};

// One event's fields as read; the rest of an event is ignored.
struct TimelineEvent {
  int64_t index = 0;  // in the file's event array, from 0
  int64_t line = 0;   // where its `{` is, from 1
  std::string ph;
  std::string name;  // valid UTF-8, at most kMaxStringBytes
  std::string cat;
  std::string scope;           // "s" (instants)
  std::optional<int64_t> ts;   // nanoseconds, exactly as written in µs
  std::optional<int64_t> dur;  // nanoseconds
  std::optional<EventId> pid;
  std::optional<EventId> tid;
  // Strings, integers, reals; booleans as 0/1; arrays and objects as their
  // JSON text; nulls left out.
  std::vector<ImportedArg> args;

  // The arg named `key`, or null.
  const ImportedArg* Arg(std::string_view key) const;
};

struct TimelineSource {
  std::string file;  // for messages
  // Escape raw tensor names first (Horovod, Bluefog; see above).
  bool escape_process_names = false;
  // Appended to a JSON syntax error's message.
  std::string syntax_hint;
};

struct TimelineSummary {
  int64_t events = 0;
  int64_t escaped_names = 0;  // tensor names that were escaped
};

// Reads the events of `json` (taken by value: it is padded for the parser)
// in order, calling `visit` with each. The first error `visit` returns ends
// the reading and is returned. Errors of the file's own: INVALID_ARGUMENT,
// "FILE: line L column C: not valid JSON (...) in event N; nothing
// imported", or naming the event and field as EventError does.
absl::Status ReadTimelineEvents(
    std::string json, const TimelineSource& source,
    absl::FunctionRef<absl::Status(TimelineEvent&)> visit,
    TimelineSummary* summary = nullptr);

// INVALID_ARGUMENT "FILE: event N (line L, "name"): what", the form every
// framework reader's errors take.
absl::Status EventError(const std::string& file, int64_t index, int64_t line,
                        std::string_view name, std::string_view what);
absl::Status EventError(const std::string& file, const TimelineEvent& event,
                        std::string_view what);

// "N events of phases not imported ("C" 2, "P" 1)", or "" if none.
std::string SkippedPhasesNote(const std::map<std::string, int64_t>& by_phase);

// Escapes the raw tensor names of `json`'s process_name records (see
// above); returns how many it changed.
int64_t EscapeRawProcessNames(std::string* json);

// What a reader says of the names ReadTimelineEvents escaped; "" if none.
std::string EscapedNamesNote(const TimelineSummary& summary);

// Every framework reader's skeleton: `json`'s events, each to `handle`,
// then the trace made by `finish`, with the note of the names escaped
// (EscapedNamesNote) first. The first error of either, as it is.
absl::StatusOr<ImportedTrace> ReadTimeline(
    std::string json, const TimelineSource& source,
    absl::FunctionRef<absl::Status(TimelineEvent&)> handle,
    absl::FunctionRef<absl::Status(ImportedTrace*)> finish);

}  // namespace meridian

#endif  // MERIDIAN_IMPORT_TIMELINE_EVENTS_H_
