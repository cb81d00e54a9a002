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
#include "import/micros.h"
#include "import/paths.h"
#include "wire/span_rules.h"

namespace meridian {
namespace {

namespace od = simdjson::ondemand;

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

struct FlowEnd {
  int track;
  int64_t ts;
  char phase;      // 's', 't' or 'f'
  bool enclosing;  // "bp":"e", or a start/step (binds to the slice around)
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

// The longest prefix of `s` of at most `max` bytes that ends on a whole
// UTF-8 character.
std::string Prefix(std::string_view s, size_t max) {
  return std::string(s.substr(0, Utf8Prefix(s, max)));
}

class Reader {
 public:
  explicit Reader(const ChromeReadOptions& options) : options_(options) {}

  absl::StatusOr<ImportedTrace> Read(std::string json);

 private:
  absl::Status Fail(int64_t event, const std::string& name,
                    const std::string& what) const {
    std::string where = absl::StrCat(options_.file, ": event ", event);
    if (!name.empty()) {
      absl::StrAppend(&where, " (\"", Prefix(name, 80), "\")");
    }
    return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
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
  absl::Status ReadTime(od::value value, const char* field,
                        std::optional<int64_t>* out);
  absl::Status ReadKey(od::value value, const char* field, Key* out);

  int Process(const Key& pid);
  int Track(int process, const Key& tid);
  ImportedSpan MakeSpan(Event& e, int track, v1::SpanKind kind);
  void BindFlows(const std::string& dialect);
  absl::Status Finish(ImportedTrace* out);

  const ChromeReadOptions& options_;
  const char* base_ = nullptr;  // the JSON text, for error locations
  simdjson::error_code pending_ = simdjson::SUCCESS;
  int64_t index_ = 0;  // of the event being read
  std::string failing_name_;

  // What the top level said.
  bool kineto_ = false;
  std::optional<int64_t> epoch_ns_;  // otherData.epoch_ns (Meridian)
  std::optional<int64_t> base_ns_;   // baseTimeNanoseconds (Kineto)
  std::optional<int64_t> dist_rank_;

  std::vector<RawProcess> processes_;
  absl::flat_hash_map<std::string, int> process_index_;
  std::vector<RawTrack> tracks_;
  absl::flat_hash_map<std::string, int> track_index_;
  std::vector<ImportedSpan> spans_;  // times relative until Finish
  std::map<int, std::vector<ImportedSpan>> open_;  // B without E, by track
  std::map<std::tuple<int, std::string, std::string>,
           std::vector<ImportedSpan>>
      open_async_;  // b without e, by (process, cat, id)
  std::map<std::string, std::vector<FlowEnd>> flows_;
  std::map<std::string, int64_t> skipped_by_phase_;
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
  auto [it, added] = process_index_.try_emplace(id, processes_.size());
  if (added) processes_.push_back(RawProcess{pid, ""});
  return it->second;
}

int Reader::Track(int process, const Key& tid) {
  const std::string id = absl::StrCat(process, "/", tid.Id());
  auto [it, added] = track_index_.try_emplace(id, tracks_.size());
  if (added) {
    RawTrack t;
    t.process = process;
    t.tid = tid;
    tracks_.push_back(std::move(t));
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
  if (GpuCategory(e.cat)) tracks_[track].gpu = true;
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
    const int process = Process(e.pid);
    for (const ImportedArg& a : e.args) {
      const std::string* str = std::get_if<std::string>(&a.value);
      const int64_t* i = std::get_if<int64_t>(&a.value);
      if (e.name == "process_name" && a.key == "name" && str) {
        processes_[process].name = *str;
      } else if (e.name == "thread_name" && a.key == "name" && str) {
        tracks_[Track(process, e.has_tid ? e.tid : e.pid)].name = *str;
      } else if (e.name == "thread_sort_index" && a.key == "sort_index" && i) {
        tracks_[Track(process, e.has_tid ? e.tid : e.pid)].sort_index = *i;
      }
    }
    return absl::OkStatus();
  }
  const bool timed = ph == 'X' || ph == 'B' || ph == 'E' || ph == 'i' ||
                     ph == 'I' || ph == 'R' || ph == 'C' || ph == 's' ||
                     ph == 't' || ph == 'f' || ph == 'b' || ph == 'e' ||
                     ph == 'n';
  if (!timed) {
    ++skipped_by_phase_[e.ph];
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
      spans_.push_back(MakeSpan(e, track, v1::SPAN_KIND_COMPLETE));
      break;
    case 'B':
      open_[track].push_back(MakeSpan(e, track, v1::SPAN_KIND_COMPLETE));
      break;
    case 'E': {
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
      spans_.push_back(std::move(span));
      break;
    }
    case 'i':
    case 'I':
    case 'R':
    case 'n':
      spans_.push_back(MakeSpan(e, track, v1::SPAN_KIND_INSTANT));
      break;
    case 'C': {
      // One series per numeric arg; named by the event alone if one.
      // Meridian's export writes a counter as {name: value} with its
      // fields (step, ...) beside: one series, the fields its own.
      const auto& numbers = e.numbers;  // MakeSpan leaves them be
      if (const std::optional<double> own = OwnCounterValue(e)) {
        ImportedSpan s = MakeSpan(e, track, v1::SPAN_KIND_COUNTER);
        s.value = *own;
        spans_.push_back(std::move(s));
        break;
      }
      for (const auto& [key, value] : numbers) {
        ImportedSpan s = MakeSpan(e, track, v1::SPAN_KIND_COUNTER);
        if (numbers.size() > 1) s.name = absl::StrCat(e.name, " ", key);
        s.value = value;
        spans_.push_back(std::move(s));
      }
      break;
    }
    case 's':
    case 't':
    case 'f':
      flows_[absl::StrCat(e.cat, "\x1f", e.name, "\x1f", e.id)].push_back(
          FlowEnd{track, *e.ts, ph, ph != 'f' || e.bp == "e"});
      break;
    case 'b':
    case 'e': {
      // Nestable async: a queue track per (process, category).
      Key queue;
      queue.text = absl::StrCat("async:", e.cat.empty() ? e.name : e.cat);
      const int async_track = Track(process, queue);
      tracks_[async_track].async = true;
      if (tracks_[async_track].name.empty()) {
        tracks_[async_track].name = queue.text.substr(6);
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
        spans_.push_back(std::move(span));
      }
      break;
    }
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
      kineto_ = true;
    } else if (key == "baseTimeNanoseconds") {
      kineto_ = true;
      int64_t base = 0;
      if (value.get_int64().get(base) != simdjson::SUCCESS) {
        return absl::InvalidArgumentError(absl::StrCat(
            options_.file, ": \"baseTimeNanoseconds\" is not an integer"));
      }
      base_ns_ = base;
    } else if (key == "distributedInfo") {
      kineto_ = true;
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
          dist_rank_ = rank;
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
        epoch_ns_ = epoch;
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

// Flow ends bind to slices of their thread: a start (or step), and an end
// with "bp":"e", to the innermost slice around it; an end without, to the
// next slice beginning on that thread. Both slices then share a
// correlation id (a fresh one unless one of them has it already). A
// Meridian export's message arrows are not links: the export draws them
// from the matched messages, which the import matches again.
void Reader::BindFlows(const std::string& dialect) {
  std::map<int, std::vector<size_t>> by_track;
  for (size_t i = 0; i < spans_.size(); ++i) {
    if (spans_[i].kind == v1::SPAN_KIND_COMPLETE) {
      by_track[spans_[i].track].push_back(i);
    }
  }
  for (auto& [track, list] : by_track) {
    std::stable_sort(list.begin(), list.end(), [&](size_t a, size_t b) {
      return spans_[a].start_ns < spans_[b].start_ns;
    });
  }
  auto bind = [&](const FlowEnd& end) -> ImportedSpan* {
    auto it = by_track.find(end.track);
    if (it == by_track.end()) return nullptr;
    const std::vector<size_t>& list = it->second;
    auto after = std::upper_bound(
        list.begin(), list.end(), end.ts,
        [&](int64_t ts, size_t i) { return ts < spans_[i].start_ns; });
    if (!end.enclosing) {
      // The next slice starting at or after ts.
      auto next = std::lower_bound(
          list.begin(), list.end(), end.ts,
          [&](size_t i, int64_t ts) { return spans_[i].start_ns < ts; });
      return next == list.end() ? nullptr : &spans_[*next];
    }
    // The innermost enclosing: the latest-starting slice that covers ts.
    for (auto at = after; at != list.begin();) {
      --at;
      ImportedSpan& s = spans_[*at];
      // Durations are at most 30 days (checked as read): no overflow.
      if (static_cast<__int128>(s.start_ns) + s.dur_ns >= end.ts) return &s;
      if (static_cast<__int128>(end.ts) - s.start_ns > kMaxDurationNs) break;
    }
    return nullptr;
  };
  uint64_t next_id = uint64_t{1} << 62;
  for (auto& [key, ends] : flows_) {
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

absl::Status Reader::Finish(ImportedTrace* out) {
  std::string dialect = options_.dialect;
  if (dialect.empty()) {
    dialect = epoch_ns_ ? "meridian" : kineto_ ? "kineto" : "chrome";
  }
  out->format = dialect;
  int64_t unclosed = 0;
  for (const auto& [track, stack] : open_) unclosed += stack.size();
  for (const auto& [key, stack] : open_async_) unclosed += stack.size();
  if (unclosed > 0) {
    out->notes.push_back(absl::StrCat(
        unclosed, " \"B\"/\"b\" events without their end were skipped"));
  }
  if (!skipped_by_phase_.empty()) {
    std::string phases;
    int64_t skipped = 0;
    for (const auto& [ph, n] : skipped_by_phase_) {
      absl::StrAppend(&phases, phases.empty() ? "" : ", ", "\"", ph, "\" ", n);
      skipped += n;
    }
    out->notes.push_back(
        absl::StrCat(skipped, " events of phases not imported (", phases, ")"));
  }
  BindFlows(dialect);

  // Processes: which raw pid becomes which process.
  const std::string default_node =
      options_.node.empty() ? PathBaseName(options_.file) : options_.node;
  std::vector<int> process_of(processes_.size(), -1);
  std::vector<bool> skip_process(processes_.size(), false);
  if (dialect == "kineto") {
    ProcessDesc p;
    p.node = default_node;
    p.rank = dist_rank_           ? static_cast<int32_t>(*dist_rank_)
             : options_.rank >= 0 ? options_.rank
                                  : 0;
    for (const RawProcess& raw : processes_) {
      if (raw.pid.numeric) p.pid = std::max(p.pid, raw.pid.number);
    }
    out->processes.push_back(p);
    std::fill(process_of.begin(), process_of.end(), 0);
  } else {
    std::vector<bool> taken;
    auto take = [&](int32_t rank) {
      if (rank >= static_cast<int32_t>(taken.size())) taken.resize(rank + 1);
      taken[rank] = true;
    };
    std::vector<int32_t> named(processes_.size(), -1);
    std::vector<std::string> host(processes_.size());
    for (size_t i = 0; i < processes_.size(); ++i) {
      const std::string& name = processes_[i].name;
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
        skip_process[i] = true;
      }
    }
    int32_t next = std::max(options_.rank, 0);
    for (size_t i = 0; i < processes_.size(); ++i) {
      if (skip_process[i]) continue;
      ProcessDesc p;
      p.node = !options_.node.empty() ? options_.node
               : !host[i].empty()     ? host[i]
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
      if (processes_[i].pid.numeric && dialect == "chrome") {
        p.pid = processes_[i].pid.number;
      }
      if (dialect == "meridian" &&
          absl::StartsWith(processes_[i].name, "pid ")) {
        int64_t pid = 0;
        const std::string rest = processes_[i].name.substr(4);
        if (absl::SimpleAtoi(rest.substr(0, rest.find(' ')), &pid)) p.pid = pid;
      }
      process_of[i] = static_cast<int>(out->processes.size());
      out->processes.push_back(p);
    }
  }

  // Tracks.
  std::vector<int> track_of(tracks_.size(), -1);
  absl::flat_hash_map<std::string, int> ext_ids;
  for (size_t i = 0; i < tracks_.size(); ++i) {
    const RawTrack& raw = tracks_[i];
    if (skip_process[raw.process]) continue;
    ImportedTrack t;
    t.process = process_of[raw.process];
    const Key& pid = processes_[raw.process].pid;
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

  // Times: relative to what?
  int64_t base = 0;
  if (dialect == "meridian" && epoch_ns_) {
    base = *epoch_ns_;
  } else if (dialect == "kineto" && base_ns_) {
    base = *base_ns_;
  } else {
    int64_t first = INT64_MAX;
    int64_t last = INT64_MIN;
    for (const ImportedSpan& s : spans_) {
      first = std::min(first, s.start_ns);
      last = std::max<int64_t>(
          last, std::min<__int128>(static_cast<__int128>(s.start_ns) + s.dur_ns,
                                   INT64_MAX));
    }
    if (!spans_.empty() && first < kMinTimestampNs) {
      if (options_.epoch_ns) {
        base = *options_.epoch_ns;
      } else if (options_.fallback_end_ns > 0) {
        const __int128 b =
            static_cast<__int128>(options_.fallback_end_ns) - last;
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

  out->spans.reserve(spans_.size());
  for (ImportedSpan& s : spans_) {
    if (skip_process[tracks_[s.track].process]) continue;
    s.track = track_of[s.track];
    // In 128 bits: a hostile "ts" or epoch cannot overflow the sum.
    const __int128 at = static_cast<__int128>(s.start_ns) + base;
    if (at < kMinTimestampNs || at > kMaxTimestampNs) {
      return Fail(
          s.event, s.name,
          absl::StrCat("field \"ts\": ", s.start_ns, " ns + epoch ", base,
                       " is not a time between 2000 and 2100 (an "
                       "absurd timestamp, or a relative trace: "
                       "--epoch-ns)"));
    }
    if (s.dur_ns > kMaxDurationNs) {
      return Fail(s.event, s.name,
                  absl::StrCat("field \"dur\": ", s.dur_ns,
                               " ns is longer than 30 days"));
    }
    s.start_ns = static_cast<int64_t>(at);
    out->spans.push_back(std::move(s));
  }
  spans_.clear();

  // The same event twice (a file concatenated, a tool that wrote twice):
  // imported once.
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
  ImportedTrace trace;
  status = Finish(&trace);
  if (!status.ok()) return status;
  return trace;
}

}  // namespace

absl::StatusOr<ImportedTrace> ReadChromeTrace(
    std::string json, const ChromeReadOptions& options) {
  Reader reader(options);
  return reader.Read(std::move(json));
}

}  // namespace meridian
