#include "import/timeline_events.h"

#include <simdjson.h>

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/utf8.h"
#include "import/micros.h"
#include "wire/span_rules.h"

namespace meridian {
namespace {

namespace od = simdjson::ondemand;

absl::string_view A(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Valid UTF-8, at most `max` bytes, cut on a whole character.
std::string Clean(std::string_view s, size_t max) {
  const std::string repaired = RepairUtf8(s);
  return repaired.substr(0, Utf8Prefix(repaired, max));
}

size_t SkipSpace(std::string_view s, size_t at) {
  while (at < s.size() && IsSpace(s[at])) ++at;
  return at;
}

// `s` at `at` (after white space) is `token`: the position after it, or
// npos.
size_t Expect(std::string_view s, size_t at, std::string_view token) {
  at = SkipSpace(s, at);
  return s.substr(std::min(at, s.size()), token.size()) == token
             ? at + token.size()
             : std::string_view::npos;
}

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
         (c >= 'A' && c <= 'F');
}

// Whether `s` may stand between a JSON string's quotes as it is.
bool IsJsonStringBody(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = s[i];
    if (c < 0x20 || c == '"') return false;
    if (c != '\\') continue;
    if (++i >= s.size()) return false;
    const char e = s[i];
    if (e == 'u') {
      if (i + 4 >= s.size()) return false;
      for (int k = 1; k <= 4; ++k) {
        if (!IsHex(s[i + k])) return false;
      }
      i += 4;
    } else if (std::string_view("\"\\/bfnrt").find(e) ==
               std::string_view::npos) {
      return false;
    }
  }
  return true;
}

std::string EscapeJson(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      absl::StrAppend(&out, "\\u00", c < 0x10 ? "0" : "",
                      absl::Hex(static_cast<unsigned char>(c)));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// Where a raw name that begins at `begin` ends: the `"` of the first `"}}`
// followed by `,`, `]` or the end of the text, before `limit`; npos if
// none.
size_t RawNameEnd(std::string_view s, size_t begin, size_t limit) {
  const std::string_view w = s.substr(0, limit);
  for (size_t q = w.find('"', begin); q != std::string_view::npos;
       q = w.find('"', q + 1)) {
    size_t at = Expect(w, q + 1, "}");
    if (at != std::string_view::npos) at = Expect(w, at, "}");
    if (at == std::string_view::npos) continue;
    at = SkipSpace(w, at);
    if (at == s.size() || (at < w.size() && (w[at] == ',' || w[at] == ']'))) {
      return q;
    }
  }
  return std::string_view::npos;
}

// The quote that opens the string left unclosed in text[0, size), or null.
const char* UnclosedString(const char* text, size_t size) {
  const char* open = nullptr;
  for (size_t i = 0; i < size; ++i) {
    if (open == nullptr) {
      if (text[i] == '"') open = text + i;
    } else if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      open = nullptr;
    }
  }
  return open;
}

class EventStream {
 public:
  EventStream(const TimelineSource& source,
              absl::FunctionRef<absl::Status(TimelineEvent&)> visit)
      : source_(source), visit_(visit) {}

  absl::Status Read(std::string json, TimelineSummary* summary);

 private:
  // Keeps a parser error for Read to report with its location; true if
  // there was one (the caller returns at once).
  bool Failed(simdjson::error_code error) {
    if (error != simdjson::SUCCESS) pending_ = error;
    return error != simdjson::SUCCESS;
  }
  absl::Status Fail(const std::string& what) const {
    return EventError(source_.file, event_, what);
  }
  absl::Status Syntax(simdjson::error_code error, od::document* doc) const;
  absl::Status ReadTop(od::document& doc);
  absl::Status ReadEvents(od::array events);
  absl::Status ReadEvent(od::object object);
  absl::Status ReadArgs(od::object args);
  absl::Status ReadTime(od::value value, const char* field,
                        std::optional<int64_t>* out);
  absl::Status ReadId(od::value value, const char* field,
                      std::optional<EventId>* out);
  int64_t LineOf(const char* at);

  const TimelineSource& source_;
  absl::FunctionRef<absl::Status(TimelineEvent&)> visit_;
  const char* base_ = nullptr;  // the JSON text, for locations
  size_t size_ = 0;
  const char* counted_ = nullptr;
  int64_t lines_ = 1;  // at counted_
  simdjson::error_code pending_ = simdjson::SUCCESS;
  TimelineEvent event_;
  int64_t index_ = 0;
};

absl::Status EventStream::Syntax(simdjson::error_code error,
                                 od::document* doc) const {
  std::string where = source_.file;
  const char* at = nullptr;
  if (error == simdjson::UNCLOSED_STRING) {
    at = UnclosedString(base_, size_);
  } else if (error == simdjson::INCOMPLETE_ARRAY_OR_OBJECT && size_ > 0) {
    // Cut short: where the text ends says more than where parsing was.
    at = base_ + size_ - 1;
    while (at > base_ && IsSpace(*at)) --at;
  } else if (doc != nullptr &&
             doc->current_location().get(at) != simdjson::SUCCESS) {
    at = nullptr;
  }
  if (at != nullptr && base_ != nullptr && at >= base_) {
    int64_t line = 1;
    const char* line_start = base_;
    for (const char* p = base_; p < at; ++p) {
      if (*p == '\n') {
        ++line;
        line_start = p + 1;
      }
    }
    absl::StrAppend(&where, ": line ", line, " column ", at - line_start + 1);
  }
  std::string message = absl::StrCat(where, ": not valid JSON (",
                                     simdjson::error_message(error), ")");
  // Before the first event began, none is named.
  if (event_.line > 0) absl::StrAppend(&message, " in event ", index_);
  absl::StrAppend(&message, "; nothing imported");
  if (!source_.syntax_hint.empty()) {
    absl::StrAppend(&message, " (", source_.syntax_hint, ")");
  }
  return absl::InvalidArgumentError(message);
}

int64_t EventStream::LineOf(const char* at) {
  if (counted_ == nullptr) counted_ = base_;
  if (at > counted_) {
    lines_ += std::count(counted_, at, '\n');
    counted_ = at;
  }
  return lines_;
}

absl::Status EventStream::ReadTime(od::value value, const char* field,
                                   std::optional<int64_t>* out) {
  od::json_type type;
  if (Failed(value.type().get(type))) return absl::OkStatus();
  std::string_view text;
  if (type == od::json_type::number) {
    text = TrimRight(value.raw_json_token());
  } else if (type == od::json_type::string) {
    if (Failed(value.get_string().get(text))) return absl::OkStatus();
  } else {
    return Fail(absl::StrCat("field \"", field, "\" is not a number"));
  }
  int64_t ns = 0;
  if (!MicrosToNs(text, &ns)) {
    return Fail(absl::StrCat("field \"", field, "\": ", Clean(text, 40),
                             " is not a number of microseconds that fits"));
  }
  *out = ns;
  return absl::OkStatus();
}

absl::Status EventStream::ReadId(od::value value, const char* field,
                                 std::optional<EventId>* out) {
  od::json_type type;
  if (Failed(value.type().get(type))) return absl::OkStatus();
  EventId id;
  if (type == od::json_type::number) {
    const absl::string_view text = A(TrimRight(value.raw_json_token()));
    double d = 0;
    if (absl::SimpleAtoi(text, &id.number)) {
      id.numeric = true;
    } else if (absl::SimpleAtod(text, &d) && d > -9.2e18 && d < 9.2e18 &&
               d == static_cast<double>(static_cast<int64_t>(d))) {
      id.numeric = true;
      id.number = static_cast<int64_t>(d);
    } else {
      return Fail(absl::StrCat("field \"", field, "\" is not an integer"));
    }
  } else if (type == od::json_type::string) {
    std::string_view text;
    if (Failed(value.get_string().get(text))) return absl::OkStatus();
    id.text = Clean(text, kMaxStringBytes);
  } else {
    return Fail(
        absl::StrCat("field \"", field, "\" is neither a number nor a string"));
  }
  *out = std::move(id);
  return absl::OkStatus();
}

absl::Status EventStream::ReadArgs(od::object args) {
  for (auto field : args) {
    std::string_view key;
    if (Failed(field.unescaped_key().get(key))) return absl::OkStatus();
    od::value value;
    if (Failed(field.value().get(value))) return absl::OkStatus();
    od::json_type type;
    if (Failed(value.type().get(type))) return absl::OkStatus();
    ImportedArg arg;
    arg.key = Clean(key, 256);
    std::string_view text;
    switch (type) {
      case od::json_type::string:
        if (Failed(value.get_string().get(text))) return absl::OkStatus();
        arg.value = Clean(text, kMaxStringBytes);
        break;
      case od::json_type::number: {
        text = TrimRight(value.raw_json_token());
        int64_t i = 0;
        double d = 0;
        if (absl::SimpleAtoi(A(text), &i)) {
          arg.value = i;
        } else if (absl::SimpleAtod(A(text), &d)) {
          arg.value = d;
        } else {
          return Fail(absl::StrCat("args.", arg.key, ": not a number"));
        }
        break;
      }
      case od::json_type::boolean: {
        bool b = false;
        if (Failed(value.get_bool().get(b))) return absl::OkStatus();
        arg.value = static_cast<int64_t>(b ? 1 : 0);
        break;
      }
      case od::json_type::null:
        continue;
      default:
        if (Failed(simdjson::to_json_string(value).get(text))) {
          return absl::OkStatus();
        }
        arg.value = Clean(text, kMaxStringBytes);
    }
    event_.args.push_back(std::move(arg));
  }
  return absl::OkStatus();
}

absl::Status EventStream::ReadEvent(od::object object) {
  for (auto field : object) {
    std::string_view key;
    if (Failed(field.unescaped_key().get(key))) return absl::OkStatus();
    od::value value;
    if (Failed(field.value().get(value))) return absl::OkStatus();
    absl::Status status;
    if (key == "ph" || key == "name" || key == "cat" || key == "s") {
      std::string_view text;
      if (auto error = value.get_string().get(text)) {
        if (error == simdjson::INCORRECT_TYPE) {
          return Fail(absl::StrCat("field \"", A(key), "\" is not a string"));
        }
        pending_ = error;
        return absl::OkStatus();
      }
      std::string s = Clean(text, kMaxStringBytes);
      if (key == "ph") event_.ph = std::move(s);
      if (key == "name") event_.name = std::move(s);
      if (key == "cat") event_.cat = std::move(s);
      if (key == "s") event_.scope = std::move(s);
    } else if (key == "ts") {
      status = ReadTime(value, "ts", &event_.ts);
    } else if (key == "dur") {
      status = ReadTime(value, "dur", &event_.dur);
    } else if (key == "pid") {
      status = ReadId(value, "pid", &event_.pid);
    } else if (key == "tid") {
      status = ReadId(value, "tid", &event_.tid);
    } else if (key == "args") {
      od::object args;
      if (auto error = value.get_object().get(args)) {
        if (error == simdjson::INCORRECT_TYPE) {
          return Fail("field \"args\" is not an object");
        }
        pending_ = error;
        return absl::OkStatus();
      }
      status = ReadArgs(args);
    }
    if (!status.ok() || pending_ != simdjson::SUCCESS) return status;
  }
  return absl::OkStatus();
}

absl::Status EventStream::ReadEvents(od::array events) {
  for (auto element : events) {
    od::value value;
    if (Failed(element.get(value))) return absl::OkStatus();
    event_ = TimelineEvent();
    event_.index = index_;
    const char* at = nullptr;
    if (value.current_location().get(at) == simdjson::SUCCESS) {
      event_.line = LineOf(at);
    }
    od::object object;
    if (auto error = value.get_object().get(object)) {
      if (error == simdjson::INCORRECT_TYPE) return Fail("not an object");
      pending_ = error;
      return absl::OkStatus();
    }
    absl::Status status = ReadEvent(object);
    if (!status.ok() || pending_ != simdjson::SUCCESS) return status;
    status = visit_(event_);
    if (!status.ok()) return status;
    ++index_;
  }
  return absl::OkStatus();
}

absl::Status EventStream::ReadTop(od::document& doc) {
  od::json_type type;
  if (Failed(doc.type().get(type))) return absl::OkStatus();
  if (type == od::json_type::array) {
    od::array events;
    if (Failed(doc.get_array().get(events))) return absl::OkStatus();
    return ReadEvents(events);
  }
  if (type != od::json_type::object) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_.file,
                     ": the top level is neither an array of events nor an "
                     "object with \"traceEvents\"; nothing imported"));
  }
  od::object top;
  if (Failed(doc.get_object().get(top))) return absl::OkStatus();
  bool saw_events = false;
  for (auto field : top) {
    std::string_view key;
    if (Failed(field.unescaped_key().get(key))) return absl::OkStatus();
    if (key != "traceEvents") continue;
    od::array events;
    if (auto error = field.value().get_array().get(events)) {
      if (error == simdjson::INCORRECT_TYPE) {
        return absl::InvalidArgumentError(
            absl::StrCat(source_.file, ": \"traceEvents\" is not an array"));
      }
      pending_ = error;
      return absl::OkStatus();
    }
    saw_events = true;
    absl::Status status = ReadEvents(events);
    if (!status.ok() || pending_ != simdjson::SUCCESS) return status;
  }
  if (!saw_events) {
    return absl::InvalidArgumentError(absl::StrCat(
        source_.file, ": an object without \"traceEvents\"; nothing imported"));
  }
  return absl::OkStatus();
}

absl::Status EventStream::Read(std::string json, TimelineSummary* summary) {
  TimelineSummary counts;
  if (source_.escape_process_names) {
    counts.escaped_names = EscapeRawProcessNames(&json);
  }
  // An array never closed (Horovod before 0.20.1, Bluefog): closed here,
  // after its trailing comma.
  const size_t begin = json.find_first_not_of(" \t\r\n");
  const size_t end = json.find_last_not_of(" \t\r\n");
  if (begin != std::string::npos && json[begin] == '[' && json[end] != ']') {
    if (json[end] == ',' && end > begin) {
      json.resize(end);
    } else {
      json.resize(end + 1);
    }
    json.append("]");
  }
  const size_t size = json.size();
  json.append(simdjson::SIMDJSON_PADDING, ' ');
  base_ = json.data();
  size_ = size;
  od::parser parser;
  od::document doc;
  if (auto error = parser.iterate(json.data(), size, json.size()).get(doc)) {
    return Syntax(error, nullptr);
  }
  absl::Status status = ReadTop(doc);
  if (!status.ok()) return status;
  if (pending_ != simdjson::SUCCESS) return Syntax(pending_, &doc);
  counts.events = index_;
  if (summary != nullptr) *summary = counts;
  return absl::OkStatus();
}

}  // namespace

const ImportedArg* TimelineEvent::Arg(std::string_view key) const {
  for (const ImportedArg& a : args) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

absl::Status ReadTimelineEvents(
    std::string json, const TimelineSource& source,
    absl::FunctionRef<absl::Status(TimelineEvent&)> visit,
    TimelineSummary* summary) {
  EventStream stream(source, visit);
  return stream.Read(std::move(json), summary);
}

absl::Status EventError(const std::string& file, int64_t index, int64_t line,
                        std::string_view name, std::string_view what) {
  std::string where = absl::StrCat(file, ": event ", index);
  if (line > 0) absl::StrAppend(&where, " (line ", line);
  if (!name.empty()) {
    absl::StrAppend(&where, line > 0 ? ", \"" : " (\"",
                    A(name.substr(0, Utf8Prefix(name, 80))), "\"");
  }
  if (line > 0 || !name.empty()) where.push_back(')');
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", A(what)));
}

absl::Status EventError(const std::string& file, const TimelineEvent& event,
                        std::string_view what) {
  return EventError(file, event.index, event.line, event.name, what);
}

std::string SkippedPhasesNote(const std::map<std::string, int64_t>& by_phase) {
  std::string phases;
  int64_t skipped = 0;
  for (const auto& [ph, n] : by_phase) {
    absl::StrAppend(&phases, phases.empty() ? "" : ", ", "\"", ph, "\" ", n);
    skipped += n;
  }
  if (skipped == 0) return "";
  return absl::StrCat(skipped, " events of phases not imported (", phases, ")");
}

int64_t EscapeRawProcessNames(std::string* json) {
  static constexpr std::string_view kRecord = "\"process_name\"";
  const std::string_view s = *json;
  std::string out;
  size_t copied = 0;  // s[0, copied) is in out
  int64_t escaped = 0;
  // Each record is looked at up to the next one, its line's end, or
  // kMaxStringBytes past its name's start, whichever is first: every byte
  // is looked at a bounded number of times, whatever the text.
  size_t next = s.find(kRecord);
  while (next != std::string_view::npos) {
    const size_t at = next + kRecord.size();
    next = s.find(kRecord, at);
    size_t limit = std::min(next == std::string_view::npos ? s.size() : next,
                            std::min(s.size(), at + kMaxStringBytes + 256));
    const size_t newline = s.substr(0, limit).find('\n', at);
    if (newline != std::string_view::npos) limit = newline;
    const std::string_view record = s.substr(0, limit);
    // Horovod's and Bluefog's records put "args" after name, ph and pid.
    const size_t args = record.substr(at, 128).find("\"args\"");
    if (args == std::string_view::npos) continue;
    size_t begin = Expect(record, at + args + 6, ":");
    for (std::string_view token : {"{", "\"name\"", ":", "\""}) {
      if (begin != std::string_view::npos) begin = Expect(record, begin, token);
    }
    if (begin == std::string_view::npos) continue;
    const size_t end = RawNameEnd(s, begin, limit);
    if (end == std::string_view::npos) continue;
    const std::string_view name = s.substr(begin, end - begin);
    if (IsJsonStringBody(name)) continue;
    out.append(s.substr(copied, begin - copied));
    out.append(EscapeJson(name));
    copied = end;
    ++escaped;
  }
  if (escaped > 0) {
    out.append(s.substr(copied));
    *json = std::move(out);
  }
  return escaped;
}

std::string EscapedNamesNote(const TimelineSummary& summary) {
  if (summary.escaped_names == 0) return "";
  return absl::StrCat(summary.escaped_names,
                      " tensor names with unescaped quotes, backslashes or "
                      "control characters were read as written");
}

absl::StatusOr<ImportedTrace> ReadTimeline(
    std::string json, const TimelineSource& source,
    absl::FunctionRef<absl::Status(TimelineEvent&)> handle,
    absl::FunctionRef<absl::Status(ImportedTrace*)> finish) {
  TimelineSummary summary;
  absl::Status status =
      ReadTimelineEvents(std::move(json), source, handle, &summary);
  if (!status.ok()) return status;
  ImportedTrace trace;
  if (std::string note = EscapedNamesNote(summary); !note.empty()) {
    trace.notes.push_back(std::move(note));
  }
  status = finish(&trace);
  if (!status.ok()) return status;
  return trace;
}

}  // namespace meridian
