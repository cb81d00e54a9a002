#include "wire/batch_validator.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "wire/span_chunk.h"

namespace meridian {
namespace {

// Prefixes every message with the batch it is about.
class Checker {
 public:
  explicit Checker(const v1::Batch& batch) : batch_(batch) {}

  absl::Status Fail(const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("batch ", batch_.batch_seq(), " from agent \"",
                     Printable(batch_.agent_id()), "\": ", what));
  }

  bool ValidString(uint32_t index) const {
    return index < static_cast<uint32_t>(batch_.strings_size());
  }

  // A string for an error message: cut short, control characters escaped.
  static std::string Printable(const std::string& s) {
    std::string out;
    for (char c : s.substr(0, 80)) {
      if (static_cast<unsigned char>(c) < 0x20 || c == '"' || c == '\\') {
        absl::StrAppend(
            &out, "\\x",
            absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
      } else {
        out.push_back(c);
      }
    }
    if (s.size() > 80) out += "...";
    return out;
  }

 private:
  const v1::Batch& batch_;
};

// The fields every span has, however it was sent.
struct SpanFields {
  uint32_t name;
  int64_t category;
  int64_t kind;
  int64_t start_ns;
  int64_t dur_ns;
  int64_t bytes;
  double value;
};

// What is wrong with a span's fields, or "" (fields are named as in v1::Span,
// whose names the chunk columns share). The caller names the span only when
// something is wrong: naming it costs more than checking it.
std::string SpanFieldsProblem(const Checker& check, const v1::Batch& batch,
                              const SpanFields& f) {
  if (!check.ValidString(f.name)) {
    return absl::StrCat("name index ", f.name,
                        " is out of range; the batch has ",
                        batch.strings_size(), " strings");
  }
  if (batch.strings(f.name).empty()) {
    return absl::StrCat("name is empty");
  }
  if (f.category > INT32_MAX || !v1::Category_IsValid(f.category) ||
      f.category == v1::CATEGORY_UNSPECIFIED) {
    return absl::StrCat("category ", f.category, " is not a known category");
  }
  if (f.kind > INT32_MAX || !v1::SpanKind_IsValid(f.kind)) {
    return absl::StrCat("kind ", f.kind, " is not a known span kind");
  }
  if (f.start_ns < kMinTimestampNs || f.start_ns > kMaxTimestampNs) {
    return absl::StrCat(
        "start_ns ", f.start_ns,
        " is not a Unix-epoch time in nanoseconds between the years 2000 and "
        "2100");
  }
  if (f.dur_ns < 0) {
    return absl::StrCat("dur_ns is ", f.dur_ns, "; durations must be >= 0");
  }
  if (f.dur_ns > kMaxDurationNs) {
    return absl::StrCat("dur_ns is ", f.dur_ns,
                        "; durations must be at most 30 days (", kMaxDurationNs,
                        " ns)");
  }
  if (f.start_ns + f.dur_ns > kMaxTimestampNs) {
    return absl::StrCat("ends after the year 2100");
  }
  if (f.bytes < 0) {
    return absl::StrCat("bytes is ", f.bytes, "; must be >= 0");
  }
  if (!std::isfinite(f.value)) {
    return absl::StrCat("value is not a finite number");
  }
  return "";
}

// What is wrong with arg `a` of a span, or "".
std::string ArgProblem(const Checker& check, const v1::Batch& batch, int a,
                       uint32_t key, bool is_string, uint64_t string_index,
                       bool is_real, double real) {
  if (is_real && !std::isfinite(real)) {
    return absl::StrCat("arg ", a, " is not a finite number");
  }
  if (!check.ValidString(key) || batch.strings(key).empty()) {
    return absl::StrCat("arg ", a, " has no valid key string");
  }
  if (is_string && (string_index > UINT32_MAX ||
                    !check.ValidString(static_cast<uint32_t>(string_index)))) {
    return absl::StrCat("arg ", a, " value index ", string_index,
                        " is out of range");
  }
  return "";
}

std::string SpanWhere(const Checker& check, const v1::Batch& batch,
                      std::string where, uint32_t name) {
  if (check.ValidString(name)) {
    absl::StrAppend(&where, " (\"", Checker::Printable(batch.strings(name)),
                    "\")");
  }
  return where;
}

absl::Status ValidateSpan(const Checker& check, const v1::Batch& batch, int i) {
  const v1::Span& span = batch.spans(i);
  auto fail = [&](const std::string& problem) {
    return check.Fail(absl::StrCat(
        SpanWhere(check, batch, absl::StrCat("span ", i), span.name()), ": ",
        problem));
  };
  if (span.track() >= static_cast<uint32_t>(batch.tracks_size())) {
    return fail(absl::StrCat("track index ", span.track(),
                             " is out of range; the batch has ",
                             batch.tracks_size(), " tracks"));
  }
  std::string problem = SpanFieldsProblem(
      check, batch,
      {span.name(), span.category(), span.kind(), span.start_ns(),
       span.dur_ns(), span.bytes(), span.value()});
  if (!problem.empty()) return fail(problem);
  for (int a = 0; a < span.args_size(); ++a) {
    const v1::Arg& arg = span.args(a);
    problem = ArgProblem(check, batch, a, arg.key(),
                         arg.value_case() == v1::Arg::kStr, arg.str(),
                         arg.value_case() == v1::Arg::kReal, arg.real());
    if (!problem.empty()) return fail(problem);
  }
  return absl::OkStatus();
}

// A chunk is decoded whole (DecodeSpanChunk checks its structure) and each
// of its spans is held to the same rules as a span sent as a message.
absl::Status ValidateChunk(const Checker& check, const v1::Batch& batch, int i,
                           SpanColumns* spans) {
  const v1::SpanChunk& chunk = batch.chunks(i);
  const std::string where =
      absl::StrCat("chunk ", i, " (track ", chunk.track(), ")");
  if (chunk.track() >= static_cast<uint32_t>(batch.tracks_size())) {
    return check.Fail(absl::StrCat(where, ": track index is out of range; ",
                                   "the batch has ", batch.tracks_size(),
                                   " tracks"));
  }
  absl::Status status = DecodeSpanChunk(chunk.data(), spans);
  if (!status.ok()) {
    return check.Fail(absl::StrCat(where, ": ", status.message()));
  }
  if (spans->size() != chunk.count()) {
    return check.Fail(absl::StrCat(where, ": count is ", chunk.count(),
                                   " but its data holds ", spans->size(),
                                   " spans"));
  }
  if (chunk.ring() > static_cast<uint32_t>(batch.rings_size())) {
    return check.Fail(absl::StrCat(where, ": ring ", chunk.ring(),
                                   " is out of range; the batch has ",
                                   batch.rings_size(), " ring ranges"));
  }
  if (chunk.ring() != 0) {
    const v1::RingRange& range = batch.rings(chunk.ring() - 1);
    for (size_t j = 0; j < spans->size(); ++j) {
      if (spans->record[j] < range.begin() || spans->record[j] >= range.end()) {
        return check.Fail(absl::StrCat(where, ", span ", j, ": record ",
                                       spans->record[j],
                                       " is outside its ring range [",
                                       range.begin(), ", ", range.end(), ")"));
      }
    }
  }
  if (spans->start_ns.front() != chunk.first_start_ns()) {
    return check.Fail(absl::StrCat(
        where, ": first_start_ns is ", chunk.first_start_ns(),
        " but its earliest span starts at ", spans->start_ns.front()));
  }
  for (size_t j = 0; j < spans->size(); ++j) {
    auto fail = [&](const std::string& problem) {
      return check.Fail(absl::StrCat(
          SpanWhere(check, batch, absl::StrCat(where, ", span ", j),
                    spans->name[j]),
          ": ", problem));
    };
    std::string problem = SpanFieldsProblem(
        check, batch,
        {spans->name[j], spans->category[j], spans->kind[j], spans->start_ns[j],
         spans->dur_ns[j], spans->bytes[j], spans->value[j]});
    if (!problem.empty()) return fail(problem);
    const uint32_t begin = j == 0 ? 0 : spans->arg_end[j - 1];
    for (uint32_t a = begin; a < spans->arg_end[j]; ++a) {
      const ChunkArg& arg = spans->args[a];
      problem = ArgProblem(check, batch, static_cast<int>(a - begin), arg.key,
                           arg.type == ChunkArg::Type::kString,
                           static_cast<uint64_t>(arg.value),
                           arg.type == ChunkArg::Type::kReal, arg.real);
      if (!problem.empty()) return fail(problem);
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool HasClockModel(const v1::Batch& batch) {
  const v1::ClockModel& c = batch.clock();
  return c.reference_ns() != 0 || c.offset_ns() != 0 || c.drift_ppb() != 0 ||
         c.uncertainty_ns() != 0 || c.node() != 0;
}

absl::Status ValidateBatch(const v1::Batch& batch,
                           std::vector<SpanColumns>* decoded) {
  Checker check(batch);
  if (batch.agent_id().empty()) return check.Fail("agent_id is empty");
  if (batch.agent_id().size() > kMaxAgentIdBytes) {
    return check.Fail(absl::StrCat("agent_id is ", batch.agent_id().size(),
                                   " bytes; at most ", kMaxAgentIdBytes,
                                   " are allowed"));
  }
  if (batch.batch_seq() == 0) {
    return check.Fail("batch_seq is 0; sequence numbers start at 1");
  }
  if (batch.strings_size() > 0 && !batch.strings(0).empty()) {
    return check.Fail("strings[0] must be the empty string");
  }
  for (int i = 0; i < batch.strings_size(); ++i) {
    if (batch.strings(i).size() > kMaxStringBytes) {
      return check.Fail(
          absl::StrCat("string ", i, " is ", batch.strings(i).size(),
                       " bytes; at most ", kMaxStringBytes, " are allowed"));
    }
  }
  for (int i = 0; i < batch.processes_size(); ++i) {
    const v1::Process& p = batch.processes(i);
    if (!check.ValidString(p.job()) || batch.strings(p.job()).empty()) {
      return check.Fail(absl::StrCat("process ", i, " has no job name"));
    }
    if (!check.ValidString(p.node())) {
      return check.Fail(absl::StrCat("process ", i, ": node index ", p.node(),
                                     " is out of range"));
    }
  }
  for (int i = 0; i < batch.tracks_size(); ++i) {
    const v1::Track& t = batch.tracks(i);
    if (t.process() >= static_cast<uint32_t>(batch.processes_size())) {
      return check.Fail(absl::StrCat("track ", i, ": process index ",
                                     t.process(),
                                     " is out of range; the batch has ",
                                     batch.processes_size(), " processes"));
    }
    if (!check.ValidString(t.name())) {
      return check.Fail(absl::StrCat("track ", i, ": name index ", t.name(),
                                     " is out of range"));
    }
    if (!v1::TrackKind_IsValid(t.kind())) {
      return check.Fail(absl::StrCat("track ", i, ": kind ",
                                     static_cast<int>(t.kind()),
                                     " is not a known track kind"));
    }
  }
  for (int i = 0; i < batch.spans_size(); ++i) {
    absl::Status status = ValidateSpan(check, batch, i);
    if (!status.ok()) return status;
  }
  for (int i = 0; i < batch.rings_size(); ++i) {
    if (batch.rings(i).end() < batch.rings(i).begin()) {
      return check.Fail(absl::StrCat("ring range ", i, ": end ",
                                     batch.rings(i).end(), " is before begin ",
                                     batch.rings(i).begin()));
    }
  }
  std::vector<SpanColumns> scratch(decoded == nullptr ? 1 : 0);
  if (decoded != nullptr) decoded->resize(batch.chunks_size());
  for (int i = 0; i < batch.chunks_size(); ++i) {
    SpanColumns* spans = decoded != nullptr ? &(*decoded)[i] : &scratch[0];
    absl::Status status = ValidateChunk(check, batch, i, spans);
    if (!status.ok()) return status;
  }
  const v1::ClockModel& clock = batch.clock();
  if (HasClockModel(batch)) {
    if (!check.ValidString(clock.node()) ||
        batch.strings(clock.node()).empty()) {
      return check.Fail(absl::StrCat(
          "clock: node index ", clock.node(),
          " does not name a node; a clock model says whose clock it is"));
    }
    if (clock.reference_ns() < kMinTimestampNs ||
        clock.reference_ns() > kMaxTimestampNs) {
      return check.Fail(absl::StrCat("clock: reference_ns ",
                                     clock.reference_ns(),
                                     " is outside years 2000..2100"));
    }
    if (clock.uncertainty_ns() < 0) {
      return check.Fail(absl::StrCat("clock: uncertainty_ns ",
                                     clock.uncertainty_ns(), " is negative"));
    }
    if (std::abs(clock.drift_ppb()) > kMaxDriftPpb) {
      return check.Fail(absl::StrCat("clock: drift_ppb ", clock.drift_ppb(),
                                     " is beyond +-", kMaxDriftPpb,
                                     " (1000 ppm)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace meridian
