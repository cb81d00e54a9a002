#include "collector/batch_validator.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"

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

absl::Status ValidateSpan(const Checker& check, const v1::Batch& batch, int i) {
  const v1::Span& span = batch.spans(i);
  std::string where = absl::StrCat("span ", i);
  if (check.ValidString(span.name())) {
    absl::StrAppend(&where, " (\"",
                    Checker::Printable(batch.strings(span.name())), "\")");
  }
  if (span.track() >= static_cast<uint32_t>(batch.tracks_size())) {
    return check.Fail(absl::StrCat(where, ": track index ", span.track(),
                                   " is out of range; the batch has ",
                                   batch.tracks_size(), " tracks"));
  }
  if (!check.ValidString(span.name())) {
    return check.Fail(absl::StrCat(where, ": name index ", span.name(),
                                   " is out of range; the batch has ",
                                   batch.strings_size(), " strings"));
  }
  if (batch.strings(span.name()).empty()) {
    return check.Fail(absl::StrCat(where, ": name is empty"));
  }
  if (!v1::Category_IsValid(span.category()) ||
      span.category() == v1::CATEGORY_UNSPECIFIED) {
    return check.Fail(absl::StrCat(where, ": category ",
                                   static_cast<int>(span.category()),
                                   " is not a known category"));
  }
  if (!v1::SpanKind_IsValid(span.kind())) {
    return check.Fail(absl::StrCat(where, ": kind ",
                                   static_cast<int>(span.kind()),
                                   " is not a known span kind"));
  }
  if (span.start_ns() < kMinTimestampNs || span.start_ns() > kMaxTimestampNs) {
    return check.Fail(absl::StrCat(
        where, ": start_ns ", span.start_ns(),
        " is not a Unix-epoch time in nanoseconds between the years 2000 and "
        "2100"));
  }
  if (span.dur_ns() < 0) {
    return check.Fail(absl::StrCat(where, ": dur_ns is ", span.dur_ns(),
                                   "; durations must be >= 0"));
  }
  if (span.dur_ns() > kMaxDurationNs) {
    return check.Fail(absl::StrCat(where, ": dur_ns is ", span.dur_ns(),
                                   "; durations must be at most 30 days (",
                                   kMaxDurationNs, " ns)"));
  }
  if (span.start_ns() + span.dur_ns() > kMaxTimestampNs) {
    return check.Fail(absl::StrCat(where, ": ends after the year 2100"));
  }
  if (span.bytes() < 0) {
    return check.Fail(
        absl::StrCat(where, ": bytes is ", span.bytes(), "; must be >= 0"));
  }
  if (!std::isfinite(span.value())) {
    return check.Fail(absl::StrCat(where, ": value is not a finite number"));
  }
  for (int a = 0; a < span.args_size(); ++a) {
    const v1::Arg& arg = span.args(a);
    if (arg.value_case() == v1::Arg::kReal && !std::isfinite(arg.real())) {
      return check.Fail(
          absl::StrCat(where, ": arg ", a, " is not a finite number"));
    }
    if (!check.ValidString(arg.key()) || batch.strings(arg.key()).empty()) {
      return check.Fail(
          absl::StrCat(where, ": arg ", a, " has no valid key string"));
    }
    if (arg.value_case() == v1::Arg::kStr && !check.ValidString(arg.str())) {
      return check.Fail(absl::StrCat(where, ": arg ", a, " value index ",
                                     arg.str(), " is out of range"));
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

absl::Status ValidateBatch(const v1::Batch& batch) {
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
