#include "import/chrome_trace_reader.h"

#include <simdjson.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/utf8.h"
#include "import/chrome_trace_events.h"
#include "import/micros.h"
#include "import/paths.h"
#include "wire/span_rules.h"

namespace meridian {
namespace {

namespace od = simdjson::ondemand;
using chrome::FlowEnd;
using chrome::Key;
using chrome::Prefix;
using chrome::RawProcess;
using chrome::RawTrack;

// One event's fields, as read.
struct Event {
  std::string ph;
  std::string name;
  std::string cat;
  std::optional<int64_t> ts;
  std::optional<int64_t> dur;
  bool has_pid = false;
  bool has_tid = false;
  Key pid;
  Key tid;
  std::string id;
  std::string bp;
  std::vector<ImportedArg> args;
  std::vector<std::pair<std::string, double>> numbers;  // numeric args (C)
};

// The integer args Meridian's export writes for a span's own fields
// (MakeSpan puts them back; "comm" and "correlation" are hex strings).
bool IsIntegerSpanField(absl::string_view key) {
  return key == "bytes" || key == "peer" || key == "tag" ||
         key == "comm_size" || key == "seq" || key == "step" ||
         key == "partition";
}

// A "C" event of one series named as the event, beside integer span
// fields only: its value (Meridian's counters: the export writes the value
// first, so a counter named as a field, e.g. "step", is read right);
// nullopt otherwise.
std::optional<double> OwnCounterValue(const Event& e) {
  std::optional<double> own;
  for (const ImportedArg& a : e.args) {
    const bool integer = std::holds_alternative<int64_t>(a.value);
    const bool number = integer || std::holds_alternative<double>(a.value);
    if (!number) continue;  // strings are no series
    if (a.key == e.name && !own) {
      own = integer ? static_cast<double>(std::get<int64_t>(a.value))
                    : std::get<double>(a.value);
    } else if (!integer || !IsIntegerSpanField(a.key)) {
      return std::nullopt;
    }
  }
  return own;
}

bool GpuCategory(absl::string_view cat) {
  return cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" ||
         cat == "gpu_user_annotation" || cat == "cuda_kernel" ||
         cat == "cuda_memcpy" || cat == "cuda_memset";
}

int64_t DtypeBytes(absl::string_view dtype) {
  if (dtype == "Float" || dtype == "Int" || dtype == "float32" ||
      dtype == "int32") {
    return 4;
  }
  if (dtype == "Half" || dtype == "BFloat16" || dtype == "Short" ||
      dtype == "float16" || dtype == "bfloat16") {
    return 2;
  }
  if (dtype == "Double" || dtype == "Long" || dtype == "float64" ||
      dtype == "int64") {
    return 8;
  }
  if (dtype == "Byte" || dtype == "Char" || dtype == "Bool" ||
      dtype == "uint8" || dtype == "int8") {
    return 1;
  }
  return 0;
}

v1::Category CategoryOf(absl::string_view cat, absl::string_view name) {
  static const std::pair<const char*, v1::Category> kNames[] = {
      {"mpi", v1::CATEGORY_MPI},
      {"nccl", v1::CATEGORY_NCCL},
      {"cuda_kernel", v1::CATEGORY_CUDA_KERNEL},
      {"cuda_memcpy", v1::CATEGORY_CUDA_MEMCPY},
      {"cuda_memset", v1::CATEGORY_CUDA_MEMSET},
      {"cuda_sync", v1::CATEGORY_CUDA_SYNC},
      {"cuda_runtime", v1::CATEGORY_CUDA_RUNTIME},
      {"nvtx", v1::CATEGORY_NVTX},
      {"user", v1::CATEGORY_USER},
      {"c10d", v1::CATEGORY_C10D},
      // Kineto's.
      {"gpu_memcpy", v1::CATEGORY_CUDA_MEMCPY},
      {"gpu_memset", v1::CATEGORY_CUDA_MEMSET},
      {"cuda_driver", v1::CATEGORY_CUDA_RUNTIME},
      {"collective_comm", v1::CATEGORY_NCCL},
  };
  if (cat == "kernel") {
    return absl::StartsWithIgnoreCase(name, "nccl") ? v1::CATEGORY_NCCL
                                                    : v1::CATEGORY_CUDA_KERNEL;
  }
  if ((cat == "cuda_runtime" || cat == "cuda_driver") &&
      absl::StrContains(name, "Synchronize")) {
    return v1::CATEGORY_CUDA_SYNC;
  }
  for (const auto& [text, category] : kNames) {
    if (cat == text) return category;
  }
  if (absl::StartsWith(name, "MPI_")) return v1::CATEGORY_MPI;
  return v1::CATEGORY_USER;
}

bool ParseHex(absl::string_view text, uint64_t* out) {
  if (absl::StartsWith(text, "0x") || absl::StartsWith(text, "0X")) {
    text.remove_prefix(2);
  }
  return !text.empty() && text.size() <= 16 && absl::SimpleHexAtoi(text, out);
}

absl::string_view A(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' ||
                        s.back() == '\r' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

class Reader {
 public:
  explicit Reader(const ImportOptions& options) : options_(options) {}

  absl::StatusOr<ImportedTrace> Read(std::string json);

 private:
  absl::Status Fail(int64_t event, const std::string& name,
                    const std::string& what) const {
    return chrome::EventError(options_.file, event, name, what);
  }
  // `doc` null: the parser failed before the document began.
  absl::Status Syntax(simdjson::error_code error, od::document* doc);
  // Keeps a parser error for Read to report with its location; true if
  // there was one (the caller returns at once).
  bool Failed(simdjson::error_code error) {
    if (error != simdjson::SUCCESS) pending_ = error;
    return error != simdjson::SUCCESS;
  }
  absl::Status ReadTop(od::document& doc);
  absl::Status ReadEvents(od::array events);
  absl::Status ReadEvent(od::object object, Event* e);
  absl::Status ReadArgs(od::object args, Event* e);
  absl::Status Handle(Event& e);
  // Handle's phases: "M" (process and thread names, sort indices), "E"
  // (closes its thread's open "B"), "C" (one series per numeric arg, or
  // one of Meridian's own), "b"/"e" (nestable async, a queue track per
  // process and category).
  void Metadata(const Event& e);
  absl::Status EndSlice(Event& e, int track);
  void Counter(Event& e, int track);
  absl::Status Async(Event& e, int process, char ph);
  absl::Status ReadTime(od::value value, const char* field,
                        std::optional<int64_t>* out);
  absl::Status ReadKey(od::value value, const char* field, Key* out);

  int Process(const Key& pid);
  int Track(int process, const Key& tid);
  ImportedSpan MakeSpan(Event& e, int track, v1::SpanKind kind);

  const ImportOptions& options_;
  const char* base_ = nullptr;  // the JSON text, for error locations
  simdjson::error_code pending_ = simdjson::SUCCESS;
  int64_t index_ = 0;  // of the event being read
  std::string failing_name_;

  chrome::ReadEvents read_;  // what was read
  absl::flat_hash_map<std::string, int> process_index_;
  absl::flat_hash_map<std::string, int> track_index_;
  std::map<int, std::vector<ImportedSpan>> open_;  // B without E, by track
  std::map<std::tuple<int, std::string, std::string>,
           std::vector<ImportedSpan>>
      open_async_;  // b without e, by (process, cat, id)
};

absl::Status Reader::Syntax(simdjson::error_code error, od::document* doc) {
  std::string where = options_.file;
  const char* at = nullptr;
  if (doc != nullptr && doc->current_location().get(at) == simdjson::SUCCESS &&
      base_ != nullptr && at >= base_) {
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
  return absl::InvalidArgumentError(
      absl::StrCat(where, ": not valid JSON (", simdjson::error_message(error),
                   ") in event ", index_, "; nothing imported"));
}

absl::Status Reader::ReadTime(od::value value, const char* field,
                              std::optional<int64_t>* out) {
  od::json_type type;
  if (Failed(value.type().get(type))) return absl::OkStatus();
  std::string_view text;
  if (type == od::json_type::number) {
    text = value.raw_json_token();
    text = TrimRight(text);
  } else if (type == od::json_type::string) {
    if (Failed(value.get_string().get(text))) return absl::OkStatus();
  } else {
    return Fail(index_, failing_name_,
                absl::StrCat("field \"", field, "\" is not a number"));
  }
  int64_t ns = 0;
  if (!MicrosToNs(text, &ns)) {
    return Fail(
        index_, failing_name_,
        absl::StrCat("field \"", field, "\": ", Prefix(std::string(text), 40),
                     " is not a number of microseconds that fits"));
  }
  *out = ns;
  return absl::OkStatus();
}

absl::Status Reader::ReadKey(od::value value, const char* field, Key* out) {
  od::json_type type;
  if (Failed(value.type().get(type))) return absl::OkStatus();
  if (type == od::json_type::number) {
    std::string_view text;
    text = value.raw_json_token();
    int64_t n = 0;
    if (!absl::SimpleAtoi(A(TrimRight(text)), &n)) {
      double d = 0;
      // In range before the cast: a double beyond int64 is no id.
      if (!absl::SimpleAtod(A(TrimRight(text)), &d) || !(d > -9.2e18) ||
          !(d < 9.2e18) || d != static_cast<double>(static_cast<int64_t>(d))) {
        return Fail(index_, failing_name_,
                    absl::StrCat("field \"", field, "\" is not an integer"));
      }
      n = static_cast<int64_t>(d);
    }
    out->numeric = true;
    out->number = n;
    return absl::OkStatus();
  }
  if (type == od::json_type::string) {
    std::string_view text;
    if (Failed(value.get_string().get(text))) return absl::OkStatus();
    out->numeric = false;
    out->text = RepairUtf8(std::string(text));
    return absl::OkStatus();
  }
  return Fail(
      index_, failing_name_,
      absl::StrCat("field \"", field, "\" is neither a number nor a string"));
}

absl::Status Reader::ReadArgs(od::object args, Event* e) {
  for (auto field : args) {
    std::string_view key;
    if (Failed(field.unescaped_key().get(key))) return absl::OkStatus();
    od::value value;
    if (Failed(field.value().get(value))) return absl::OkStatus();
    od::json_type type;
    if (Failed(value.type().get(type))) return absl::OkStatus();
    ImportedArg arg;
    arg.key = Prefix(RepairUtf8(std::string(key)), 256);
    switch (type) {
      case od::json_type::string: {
        std::string_view text;
        if (Failed(value.get_string().get(text))) return absl::OkStatus();
        arg.value = Prefix(RepairUtf8(std::string(text)), kMaxStringBytes);
        break;
      }
      case od::json_type::number: {
        std::string_view text;
        text = value.raw_json_token();
        text = TrimRight(text);
        int64_t i = 0;
        double d = 0;
        if (absl::SimpleAtoi(A(text), &i)) {
          arg.value = i;
          e->numbers.emplace_back(arg.key, static_cast<double>(i));
        } else if (absl::SimpleAtod(A(text), &d)) {
          arg.value = d;
          e->numbers.emplace_back(arg.key, d);
        } else {
          return Fail(index_, failing_name_,
                      absl::StrCat("args.", arg.key, ": not a number"));
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
      default: {
        // Arrays and objects (Kineto's "Input Dims", grids): their JSON.
        std::string_view text;
        if (Failed(simdjson::to_json_string(value).get(text)))
          return absl::OkStatus();
        arg.value = Prefix(RepairUtf8(std::string(text)), kMaxStringBytes);
      }
    }
    e->args.push_back(std::move(arg));
  }
  return absl::OkStatus();
}

absl::Status Reader::ReadEvent(od::object object, Event* e) {
  for (auto field : object) {
    std::string_view key;
    if (Failed(field.unescaped_key().get(key))) return absl::OkStatus();
    od::value value;
    if (Failed(field.value().get(value))) return absl::OkStatus();
    std::string_view text;
    absl::Status status;
    if (key == "ph" || key == "name" || key == "cat" || key == "bp") {
      if (auto error = value.get_string().get(text)) {
        if (error == simdjson::INCORRECT_TYPE) {
          return Fail(index_, failing_name_,
                      absl::StrCat("field \"", A(key), "\" is not a string"));
        }
        pending_ = error;
        return absl::OkStatus();
      }
      std::string s = RepairUtf8(std::string(text));
      if (key == "ph") e->ph = std::move(s);
      if (key == "name") {
        e->name = Prefix(s, kMaxStringBytes);
        failing_name_ = e->name;
      }
      if (key == "cat") e->cat = std::move(s);
      if (key == "bp") e->bp = std::move(s);
    } else if (key == "ts") {
      status = ReadTime(value, "ts", &e->ts);
    } else if (key == "dur") {
      status = ReadTime(value, "dur", &e->dur);
    } else if (key == "pid") {
      e->has_pid = true;
      status = ReadKey(value, "pid", &e->pid);
    } else if (key == "tid") {
      e->has_tid = true;
      status = ReadKey(value, "tid", &e->tid);
    } else if (key == "id" || key == "id2") {
      od::json_type type;
      if (Failed(value.type().get(type))) return absl::OkStatus();
      if (type == od::json_type::object) {  // id2 {"local": ...}
        if (Failed(simdjson::to_json_string(value).get(text)))
          return absl::OkStatus();
        e->id = std::string(text);
      } else if (type == od::json_type::string) {
        if (Failed(value.get_string().get(text))) return absl::OkStatus();
        e->id = std::string(text);
      } else {
        text = value.raw_json_token();
        e->id = std::string(TrimRight(text));
      }
    } else if (key == "args") {
      od::object args;
      if (auto error = value.get_object().get(args)) {
        if (error == simdjson::INCORRECT_TYPE) {
          return Fail(index_, failing_name_, "field \"args\" is not an object");
        }
        pending_ = error;
        return absl::OkStatus();
      }
      status = ReadArgs(args, e);
    }
    if (!status.ok() || pending_ != simdjson::SUCCESS) return status;
  }
  return absl::OkStatus();
}

int Reader::Process(const Key& pid) {
  const std::string id = pid.Id();
  auto [it, added] = process_index_.try_emplace(id, read_.processes.size());
  if (added) read_.processes.push_back(RawProcess{pid, ""});
  return it->second;
}

int Reader::Track(int process, const Key& tid) {
  const std::string id = absl::StrCat(process, "/", tid.Id());
  auto [it, added] = track_index_.try_emplace(id, read_.tracks.size());
  if (added) {
    RawTrack t;
    t.process = process;
    t.tid = tid;
    read_.tracks.push_back(std::move(t));
  }
  return it->second;
}

// The fields Meridian's export writes as args go back to their places;
// other args stay args.
ImportedSpan Reader::MakeSpan(Event& e, int track, v1::SpanKind kind) {
  ImportedSpan s;
  s.track = track;
  s.kind = kind;
  s.category = CategoryOf(e.cat, e.name);
  s.name = e.name;
  s.start_ns = *e.ts;
  s.dur_ns = kind == v1::SPAN_KIND_COMPLETE && e.dur ? *e.dur : 0;
  s.event = index_;
  if (GpuCategory(e.cat)) read_.tracks[track].gpu = true;
  std::string collective;
  int64_t elements = -1;
  std::string dtype;
  for (ImportedArg& a : e.args) {
    const int64_t* i = std::get_if<int64_t>(&a.value);
    const std::string* str = std::get_if<std::string>(&a.value);
    uint64_t hex = 0;
    if (a.key == "bytes" && i) {
      s.bytes = *i;
    } else if (a.key == "peer" && i && *i >= INT32_MIN && *i <= INT32_MAX) {
      s.peer = static_cast<int32_t>(*i);
    } else if (a.key == "tag" && i && *i >= INT32_MIN && *i <= INT32_MAX) {
      s.tag = static_cast<int32_t>(*i);
    } else if (a.key == "comm" && str && ParseHex(*str, &hex)) {
      s.comm = hex;
    } else if (a.key == "comm_size" && i && *i >= 0 && *i <= UINT32_MAX) {
      s.comm_size = static_cast<uint32_t>(*i);
    } else if (a.key == "seq" && i && *i >= 0) {
      s.seq = static_cast<uint64_t>(*i);
    } else if (a.key == "step" && i) {
      s.step = *i;
    } else if (a.key == "partition" && i && *i >= INT32_MIN &&
               *i <= INT32_MAX) {
      s.partition = static_cast<int32_t>(*i);
    } else if (a.key == "correlation" && str && ParseHex(*str, &hex)) {
      s.correlation = hex;
    } else if (a.key == "correlation" && i && *i > 0) {
      s.correlation = static_cast<uint64_t>(*i);  // Kineto: CUPTI's id
    } else {
      if (a.key == "Collective name" && str) collective = *str;
      if (a.key == "In msg nelems" && i) elements = *i;
      if (a.key == "dtype" && str) dtype = *str;
      s.args.push_back(std::move(a));
      continue;
    }
  }
  if (kind == v1::SPAN_KIND_COUNTER) s.args.clear();
  // Kineto's NCCL kernels: the collective, and its bytes when known.
  if (s.category == v1::CATEGORY_NCCL && e.cat == "kernel" &&
      !collective.empty()) {
    s.args.push_back({"kernel", s.name});
    s.name = collective;
    if (elements >= 0 && elements < (int64_t{1} << 56) &&
        DtypeBytes(dtype) > 0 && s.bytes == 0) {
      s.bytes = elements * DtypeBytes(dtype);
    }
  }
  return s;
}

absl::Status Reader::Handle(Event& e) {
  if (e.ph.empty()) return Fail(index_, e.name, "no field \"ph\"");
  const char ph = e.ph.size() == 1 ? e.ph[0] : '?';
  if (ph == 'M') {
    Metadata(e);
    return absl::OkStatus();
  }
  const bool timed = ph == 'X' || ph == 'B' || ph == 'E' || ph == 'i' ||
                     ph == 'I' || ph == 'R' || ph == 'C' || ph == 's' ||
                     ph == 't' || ph == 'f' || ph == 'b' || ph == 'e' ||
                     ph == 'n';
  if (!timed) {
    ++read_.skipped_by_phase[e.ph];
    return absl::OkStatus();
  }
  if (!e.ts) return Fail(index_, e.name, "no field \"ts\"");
  const int process = Process(e.pid);
  // A missing tid is the pid (as Perfetto reads it).
  const int track = Track(process, e.has_tid ? e.tid : e.pid);
  switch (ph) {
    case 'X':
      if (!e.dur) return Fail(index_, e.name, "an \"X\" event without \"dur\"");
      if (*e.dur < 0) {
        return Fail(
            index_, e.name,
            absl::StrCat("field \"dur\" is negative (", *e.dur, " ns)"));
      }
      if (*e.dur > kMaxDurationNs) {
        return Fail(index_, e.name,
                    absl::StrCat("field \"dur\": ", *e.dur,
                                 " ns is longer than 30 days"));
      }
      read_.spans.push_back(MakeSpan(e, track, v1::SPAN_KIND_COMPLETE));
      break;
    case 'B':
      open_[track].push_back(MakeSpan(e, track, v1::SPAN_KIND_COMPLETE));
      break;
    case 'E': {
      absl::Status ended = EndSlice(e, track);
      if (!ended.ok()) return ended;
      break;
    }
    case 'i':
    case 'I':
    case 'R':
    case 'n':
      read_.spans.push_back(MakeSpan(e, track, v1::SPAN_KIND_INSTANT));
      break;
    case 'C':
      Counter(e, track);
      break;
    case 's':
    case 't':
    case 'f':
      read_.flows[absl::StrCat(e.cat, "\x1f", e.name, "\x1f", e.id)].push_back(
          FlowEnd{track, *e.ts, ph, ph != 'f' || e.bp == "e"});
      break;
    case 'b':
    case 'e': {
      absl::Status async = Async(e, process, ph);
      if (!async.ok()) return async;
      break;
    }
  }
  return absl::OkStatus();
}

void Reader::Metadata(const Event& e) {
  const int process = Process(e.pid);
  for (const ImportedArg& a : e.args) {
    const std::string* str = std::get_if<std::string>(&a.value);
    const int64_t* i = std::get_if<int64_t>(&a.value);
    if (e.name == "process_name" && a.key == "name" && str) {
      read_.processes[process].name = *str;
    } else if (e.name == "thread_name" && a.key == "name" && str) {
      read_.tracks[Track(process, e.has_tid ? e.tid : e.pid)].name = *str;
    } else if (e.name == "thread_sort_index" && a.key == "sort_index" && i) {
      read_.tracks[Track(process, e.has_tid ? e.tid : e.pid)].sort_index = *i;
    }
  }
}

absl::Status Reader::EndSlice(Event& e, int track) {
  std::vector<ImportedSpan>& stack = open_[track];
  if (stack.empty()) {
    return Fail(index_, e.name,
                "an \"E\" event with no open \"B\" on its thread");
  }
  ImportedSpan span = std::move(stack.back());
  stack.pop_back();
  if (*e.ts < span.start_ns) {
    return Fail(index_, e.name,
                absl::StrCat("field \"ts\": ends before its \"B\" (event ",
                             span.event, ") began"));
  }
  if (static_cast<__int128>(*e.ts) - span.start_ns > kMaxDurationNs) {
    return Fail(index_, e.name,
                absl::StrCat("field \"ts\": more than 30 days after its "
                             "\"B\" (event ",
                             span.event, ")"));
  }
  span.dur_ns = *e.ts - span.start_ns;
  ImportedSpan end = MakeSpan(e, track, v1::SPAN_KIND_COMPLETE);
  for (ImportedArg& a : end.args) span.args.push_back(std::move(a));
  read_.spans.push_back(std::move(span));
  return absl::OkStatus();
}

void Reader::Counter(Event& e, int track) {
  // One series per numeric arg; named by the event alone if one.
  // Meridian's export writes a counter as {name: value} with its
  // fields (step, ...) beside: one series, the fields its own.
  const auto& numbers = e.numbers;  // MakeSpan leaves them be
  if (const std::optional<double> own = OwnCounterValue(e)) {
    ImportedSpan s = MakeSpan(e, track, v1::SPAN_KIND_COUNTER);
    s.value = *own;
    read_.spans.push_back(std::move(s));
    return;
  }
  for (const auto& [key, value] : numbers) {
    ImportedSpan s = MakeSpan(e, track, v1::SPAN_KIND_COUNTER);
    if (numbers.size() > 1) s.name = absl::StrCat(e.name, " ", key);
    s.value = value;
    read_.spans.push_back(std::move(s));
  }
}

absl::Status Reader::Async(Event& e, int process, char ph) {
  // Nestable async: a queue track per (process, category).
  Key queue;
  queue.text = absl::StrCat("async:", e.cat.empty() ? e.name : e.cat);
  const int async_track = Track(process, queue);
  read_.tracks[async_track].async = true;
  if (read_.tracks[async_track].name.empty()) {
    read_.tracks[async_track].name = queue.text.substr(6);
  }
  std::vector<ImportedSpan>& stack =
      open_async_[std::make_tuple(process, e.cat, e.id)];
  if (ph == 'b') {
    stack.push_back(MakeSpan(e, async_track, v1::SPAN_KIND_COMPLETE));
  } else {
    if (stack.empty()) {
      return Fail(
          index_, e.name,
          absl::StrCat("an \"e\" event with no open \"b\" of id ", e.id));
    }
    ImportedSpan span = std::move(stack.back());
    stack.pop_back();
    if (*e.ts < span.start_ns ||
        static_cast<__int128>(*e.ts) - span.start_ns > kMaxDurationNs) {
      return Fail(index_, e.name,
                  "field \"ts\": ends before its \"b\" began, or more "
                  "than 30 days after");
    }
    span.dur_ns = *e.ts - span.start_ns;
    read_.spans.push_back(std::move(span));
  }
  return absl::OkStatus();
}

absl::Status Reader::ReadEvents(od::array events) {
  for (auto element : events) {
    od::value value;
    if (Failed(element.get(value))) return absl::OkStatus();
    od::object object;
    if (auto error = value.get_object().get(object)) {
      if (error == simdjson::INCORRECT_TYPE) {
        return Fail(index_, "", "not an object");
      }
      pending_ = error;
      return absl::OkStatus();
    }
    Event e;
    failing_name_.clear();
    absl::Status status = ReadEvent(object, &e);
    if (!status.ok() || pending_ != simdjson::SUCCESS) return status;
    status = Handle(e);
    if (!status.ok()) return status;
    ++index_;
  }
  return absl::OkStatus();
}

absl::Status Reader::ReadTop(od::document& doc) {
  od::json_type type;
  if (Failed(doc.type().get(type))) return absl::OkStatus();
  if (type == od::json_type::array) {
    od::array events;
    if (Failed(doc.get_array().get(events))) return absl::OkStatus();
    return ReadEvents(events);
  }
  if (type != od::json_type::object) {
    return absl::InvalidArgumentError(absl::StrCat(
        options_.file,
        ": not a Chrome trace: the top level is neither an array of events "
        "nor an object with \"traceEvents\""));
  }
  od::object top;
  if (Failed(doc.get_object().get(top))) return absl::OkStatus();
  bool saw_events = false;
  for (auto field : top) {
    std::string_view key;
    if (Failed(field.unescaped_key().get(key))) return absl::OkStatus();
    od::value value;
    if (Failed(field.value().get(value))) return absl::OkStatus();
    if (key == "traceEvents") {
      od::array events;
      if (auto error = value.get_array().get(events)) {
        if (error == simdjson::INCORRECT_TYPE) {
          return absl::InvalidArgumentError(
              absl::StrCat(options_.file, ": \"traceEvents\" is not an array"));
        }
        pending_ = error;
        return absl::OkStatus();
      }
      saw_events = true;
      absl::Status status = ReadEvents(events);
      if (!status.ok() || pending_ != simdjson::SUCCESS) return status;
    } else if (key == "schemaVersion" || key == "deviceProperties") {
      read_.kineto = true;
    } else if (key == "baseTimeNanoseconds") {
      read_.kineto = true;
      int64_t base = 0;
      if (value.get_int64().get(base) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(absl::StrCat(
            options_.file, ": \"baseTimeNanoseconds\" is not an integer"));
      }
      read_.base_ns = base;
    } else if (key == "distributedInfo") {
      read_.kineto = true;
      od::object info;
      if (value.get_object().get(info) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(absl::StrCat(
            options_.file, ": \"distributedInfo\" is not an object"));
      }
      for (auto item : info) {
        std::string_view name;
        if (Failed(item.unescaped_key().get(name))) return absl::OkStatus();
        int64_t rank = 0;
        if (name == "rank") {
          if (item.value().get_int64().get(rank) != simdjson::SUCCESS ||
              rank < 0 || rank > INT32_MAX) {
            return absl::InvalidArgumentError(absl::StrCat(
                options_.file, ": \"distributedInfo\".\"rank\" is not a rank"));
          }
          read_.dist_rank = rank;
        }
      }
    } else if (key == "otherData") {
      od::object other;
      if (value.get_object().get(other) != simdjson::SUCCESS) continue;
      for (auto item : other) {
        std::string_view name;
        if (Failed(item.unescaped_key().get(name))) return absl::OkStatus();
        if (name != "epoch_ns") continue;
        int64_t epoch = 0;
        if (item.value().get_int64().get(epoch) != simdjson::SUCCESS) {
          return absl::InvalidArgumentError(absl::StrCat(
              options_.file, ": \"otherData\".\"epoch_ns\" is not an integer"));
        }
        read_.epoch_ns = epoch;
      }
    }
  }
  if (!saw_events) {
    return absl::InvalidArgumentError(absl::StrCat(
        options_.file,
        ": not a Chrome trace: an object without \"traceEvents\""));
  }
  return absl::OkStatus();
}

absl::StatusOr<ImportedTrace> Reader::Read(std::string json) {
  // An array the tool never closed (Horovod before 0.20.1; Chrome allows
  // it): closed here, after a trailing comma.
  size_t end = json.find_last_not_of(" \t\r\n");
  const size_t begin = json.find_first_not_of(" \t\r\n");
  if (begin != std::string::npos && json[begin] == '[' && json[end] != ']') {
    if (json[end] == ',') json.resize(end);
    json.append("]");
  }
  const size_t size = json.size();
  json.append(simdjson::SIMDJSON_PADDING, ' ');
  base_ = json.data();
  od::parser parser;
  od::document doc;
  if (auto error = parser.iterate(json.data(), size, json.size()).get(doc)) {
    return Syntax(error, nullptr);
  }
  absl::Status status = ReadTop(doc);
  if (!status.ok()) return status;
  if (pending_ != simdjson::SUCCESS) return Syntax(pending_, &doc);
  for (const auto& [track, stack] : open_) read_.unclosed += stack.size();
  for (const auto& [key, stack] : open_async_) read_.unclosed += stack.size();
  ImportedTrace trace;
  status = chrome::FinishChromeTrace(read_, options_, &trace);
  if (!status.ok()) return status;
  return trace;
}

}  // namespace

absl::StatusOr<ImportedTrace> ReadChromeTrace(std::string json,
                                              const ImportOptions& options) {
  Reader reader(options);
  return reader.Read(std::move(json));
}

}  // namespace meridian
