#include "wire/batch_validator.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/utf8.h"
#include "wire/span_chunk.h"

namespace meridian {
namespace {

// A string for an error message: cut short, control characters escaped.
std::string Printable(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, Utf8Prefix(s, 80))) {
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

// The batch being checked, its strings' original sizes and what was
// dropped.
class Checker {
 public:
  Checker(v1::Batch* batch, BatchRepairs* repairs)
      : batch_(*batch), repairs_(*repairs) {}

  absl::Status Fail(const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("batch ", batch_.batch_seq(), " from agent \"",
                     Printable(batch_.agent_id()), "\": ", what));
  }

  bool ValidString(uint64_t index) const {
    return index < static_cast<uint64_t>(batch_.strings_size());
  }

  // Makes every string valid UTF-8 of at most kMaxStringBytes, keeping the
  // sizes they came with (a span named by an over-long one is dropped).
  void RepairStrings() {
    sent_bytes_.resize(batch_.strings_size());
    for (int i = 0; i < batch_.strings_size(); ++i) {
      std::string* s = batch_.mutable_strings(i);
      sent_bytes_[i] = s->size();
      bool changed = false;
      if (!IsValidUtf8(*s)) {
        *s = RepairUtf8(*s);
        changed = true;
      }
      if (s->size() > kMaxStringBytes) {
        s->resize(Utf8Prefix(*s, kMaxStringBytes));
        changed = true;
      }
      if (changed) ++repairs_.strings_repaired;
    }
  }

  // What is wrong with a span, or "": its fields (SpanProblem), its name
  // index and its args [args_begin, args_end) of `args`.
  std::string SpanProblemOf(uint64_t name, const SpanFacts& facts_but_name,
                            const ChunkArg* args, size_t n_args) const {
    if (!ValidString(name)) {
      return absl::StrCat("name index ", name,
                          " is out of range; the batch has ",
                          batch_.strings_size(), " strings");
    }
    SpanFacts facts = facts_but_name;
    facts.name_bytes = sent_bytes_[name];
    std::string problem = SpanProblem(facts);
    if (!problem.empty()) return problem;
    for (size_t a = 0; a < n_args; ++a) {
      const ChunkArg& arg = args[a];
      if (arg.type == ChunkArg::Type::kReal && !std::isfinite(arg.real)) {
        return absl::StrCat("arg ", a, " is not a finite number");
      }
      if (!ValidString(arg.key) || batch_.strings(arg.key).empty()) {
        return absl::StrCat("arg ", a, " has no valid key string");
      }
      if (arg.type == ChunkArg::Type::kString &&
          (arg.value < 0 || !ValidString(static_cast<uint64_t>(arg.value)))) {
        return absl::StrCat("arg ", a, " value index ", arg.value,
                            " is out of range");
      }
    }
    return "";
  }

  // Counts a dropped span; the first one is described.
  void Drop(const std::string& where, uint64_t name,
            const std::string& problem) {
    if (repairs_.spans_dropped++ > 0) return;
    repairs_.first_problem = where;
    if (ValidString(name)) {
      absl::StrAppend(&repairs_.first_problem, " (\"",
                      Printable(batch_.strings(name)), "\")");
    }
    absl::StrAppend(&repairs_.first_problem, ": ", problem);
  }

  const v1::Batch& batch() const { return batch_; }

 private:
  v1::Batch& batch_;
  BatchRepairs& repairs_;
  std::vector<size_t> sent_bytes_;
};

SpanFacts FactsOf(int64_t category, int64_t kind, int64_t start_ns,
                  int64_t dur_ns, int64_t bytes, double value) {
  return {0, category, kind, start_ns, dur_ns, bytes, value};
}

// Span messages: a bad track index refuses the batch; a span that breaks a
// rule is removed.
absl::Status CheckSpanMessages(Checker* check, v1::Batch* batch) {
  int kept = 0;
  std::vector<ChunkArg> args;
  for (int i = 0; i < batch->spans_size(); ++i) {
    const v1::Span& span = batch->spans(i);
    if (span.track() >= static_cast<uint32_t>(batch->tracks_size())) {
      return check->Fail(absl::StrCat(
          "span ", i, ": track index ", span.track(),
          " is out of range; the batch has ", batch->tracks_size(), " tracks"));
    }
    args.clear();
    for (const v1::Arg& arg : span.args()) {
      ChunkArg a;
      a.key = arg.key();
      if (arg.value_case() == v1::Arg::kStr) {
        a.type = ChunkArg::Type::kString;
        a.value = arg.str();
      } else if (arg.value_case() == v1::Arg::kReal) {
        a.type = ChunkArg::Type::kReal;
        a.real = arg.real();
      }
      args.push_back(a);
    }
    const std::string problem = check->SpanProblemOf(
        span.name(),
        FactsOf(span.category(), span.kind(), span.start_ns(), span.dur_ns(),
                span.bytes(), span.value()),
        args.data(), args.size());
    if (!problem.empty()) {
      check->Drop(absl::StrCat("span ", i), span.name(), problem);
      continue;
    }
    if (kept != i) batch->mutable_spans()->SwapElements(kept, i);
    ++kept;
  }
  batch->mutable_spans()->DeleteSubrange(kept, batch->spans_size() - kept);
  return absl::OkStatus();
}

// A chunk is decoded whole (DecodeSpanChunk checks its structure); each of
// its spans is held to the same rules as a span message, and those that
// break one are removed from `spans`.
absl::Status CheckChunk(Checker* check, int i, SpanColumns* spans) {
  const v1::Batch& batch = check->batch();
  const v1::SpanChunk& chunk = batch.chunks(i);
  const std::string where =
      absl::StrCat("chunk ", i, " (track ", chunk.track(), ")");
  if (chunk.track() >= static_cast<uint32_t>(batch.tracks_size())) {
    return check->Fail(absl::StrCat(where, ": track index is out of range; ",
                                    "the batch has ", batch.tracks_size(),
                                    " tracks"));
  }
  absl::Status status = DecodeSpanChunk(chunk.data(), spans);
  if (!status.ok()) {
    return check->Fail(absl::StrCat(where, ": ", status.message()));
  }
  if (spans->size() != chunk.count()) {
    return check->Fail(absl::StrCat(where, ": count is ", chunk.count(),
                                    " but its data holds ", spans->size(),
                                    " spans"));
  }
  if (chunk.ring() > static_cast<uint32_t>(batch.rings_size())) {
    return check->Fail(absl::StrCat(where, ": ring ", chunk.ring(),
                                    " is out of range; the batch has ",
                                    batch.rings_size(), " ring ranges"));
  }
  if (chunk.ring() != 0) {
    const v1::RingRange& range = batch.rings(chunk.ring() - 1);
    for (size_t j = 0; j < spans->size(); ++j) {
      if (spans->record[j] < range.begin() || spans->record[j] >= range.end()) {
        return check->Fail(absl::StrCat(where, ", span ", j, ": record ",
                                        spans->record[j],
                                        " is outside its ring range [",
                                        range.begin(), ", ", range.end(), ")"));
      }
    }
  }
  if (spans->start_ns.front() != chunk.first_start_ns()) {
    return check->Fail(absl::StrCat(
        where, ": first_start_ns is ", chunk.first_start_ns(),
        " but its earliest span starts at ", spans->start_ns.front()));
  }
  SpanColumns kept;
  bool dropped = false;
  for (size_t j = 0; j < spans->size(); ++j) {
    const uint32_t begin = j == 0 ? 0 : spans->arg_end[j - 1];
    const std::string problem = check->SpanProblemOf(
        spans->name[j],
        FactsOf(spans->category[j], spans->kind[j], spans->start_ns[j],
                spans->dur_ns[j], spans->bytes[j], spans->value[j]),
        spans->args.data() + begin, spans->arg_end[j] - begin);
    if (problem.empty()) {
      if (dropped) kept.AppendFrom(*spans, j);
      continue;
    }
    check->Drop(absl::StrCat(where, ", span ", j), spans->name[j], problem);
    if (!dropped) {  // the spans before it were good
      dropped = true;
      for (size_t k = 0; k < j; ++k) kept.AppendFrom(*spans, k);
    }
  }
  if (dropped) *spans = std::move(kept);
  return absl::OkStatus();
}

}  // namespace

// A count, byte total or time total: 0..limit.
std::string TotalProblem(const char* what, int64_t value, int64_t limit) {
  if (value < 0) return absl::StrCat(what, " ", value, " is negative");
  if (value > limit) {
    return absl::StrCat(what, " ", value, " is over ", limit);
  }
  return "";
}

// Statistics are all or nothing: a wrong one refuses the batch (only a
// broken importer sends one).
absl::Status CheckTotals(Checker* check, const v1::Batch& batch) {
  const auto process_ok = [&](uint32_t p) {
    return p < static_cast<uint32_t>(batch.processes_size());
  };
  // 2^53 each (104 days of ns, 9 PB): sums over many processes and
  // batches stay far inside int64.
  constexpr int64_t kMaxCount = int64_t{1} << 53;
  for (int i = 0; i < batch.op_totals_size(); ++i) {
    const v1::ImportedOpTotals& op = batch.op_totals(i);
    const std::string where = absl::StrCat("op totals ", i, ": ");
    if (!process_ok(op.process())) {
      return check->Fail(absl::StrCat(where, "process index ", op.process(),
                                      " is out of range"));
    }
    if (!check->ValidString(op.name()) || batch.strings(op.name()).empty()) {
      return check->Fail(absl::StrCat(where, "no valid name string"));
    }
    if (op.category() != v1::CATEGORY_MPI &&
        op.category() != v1::CATEGORY_NCCL) {
      return check->Fail(absl::StrCat(where, "category ",
                                      static_cast<int>(op.category()),
                                      " is not MPI (1) or NCCL (2)"));
    }
    int64_t size_calls = 0;
    int32_t last_log2 = -2;
    for (const v1::ImportedSizeTotals& size : op.sizes()) {
      if (size.log2() <= last_log2 || size.log2() > 62) {
        return check->Fail(absl::StrCat(where, "size bucket log2 ", size.log2(),
                                        " is not ascending in -1..62 (after ",
                                        last_log2, ")"));
      }
      last_log2 = size.log2();
      for (const std::string& problem :
           {TotalProblem("size calls", size.calls(), kMaxCount),
            TotalProblem("size bytes", size.bytes(), kMaxCount),
            TotalProblem("size dur_ns", size.dur_ns(), kMaxCount)}) {
        if (!problem.empty()) return check->Fail(where + problem);
      }
      size_calls += size.calls();
    }
    for (const std::string& problem :
         {TotalProblem("calls", op.calls(), kMaxCount),
          TotalProblem("bytes", op.bytes(), kMaxCount),
          TotalProblem("dur_ns", op.dur_ns(), kMaxCount)}) {
      if (!problem.empty()) return check->Fail(where + problem);
    }
    if (size_calls > op.calls()) {
      return check->Fail(absl::StrCat(where, "its size buckets hold ",
                                      size_calls, " calls, more than its ",
                                      op.calls()));
    }
  }
  for (int i = 0; i < batch.process_totals_size(); ++i) {
    const v1::ImportedProcessTotals& p = batch.process_totals(i);
    const std::string where = absl::StrCat("process totals ", i, ": ");
    if (!process_ok(p.process())) {
      return check->Fail(absl::StrCat(where, "process index ", p.process(),
                                      " is out of range"));
    }
    if (!check->ValidString(p.source())) {
      return check->Fail(
          absl::StrCat(where, "source index ", p.source(), " is out of range"));
    }
    for (const std::string& problem :
         {TotalProblem("comm_ns", p.comm_ns(), kMaxCount),
          TotalProblem("elapsed_ns", p.elapsed_ns(), kMaxCount),
          TotalProblem("user_ns", p.user_ns(), kMaxCount),
          TotalProblem("system_ns", p.system_ns(), kMaxCount),
          TotalProblem("max_rss_bytes", p.max_rss_bytes(), kMaxCount),
          TotalProblem("context_switches", p.context_switches(), kMaxCount)}) {
      if (!problem.empty()) return check->Fail(where + problem);
    }
  }
  return absl::OkStatus();
}

bool HasClockModel(const v1::Batch& batch) {
  const v1::ClockModel& c = batch.clock();
  return c.reference_ns() != 0 || c.offset_ns() != 0 || c.drift_ppb() != 0 ||
         c.uncertainty_ns() != 0 || c.node() != 0;
}

absl::Status ValidateBatch(v1::Batch* batch, std::vector<SpanColumns>* decoded,
                           BatchRepairs* repairs) {
  *repairs = BatchRepairs();
  decoded->clear();
  Checker check(batch, repairs);
  if (batch->agent_id().empty()) return check.Fail("agent_id is empty");
  if (batch->agent_id().size() > kMaxAgentIdBytes) {
    return check.Fail(absl::StrCat("agent_id is ", batch->agent_id().size(),
                                   " bytes; at most ", kMaxAgentIdBytes,
                                   " are allowed"));
  }
  if (batch->batch_seq() == 0) {
    return check.Fail("batch_seq is 0; sequence numbers start at 1");
  }
  if (batch->strings_size() > 0 && !batch->strings(0).empty()) {
    return check.Fail("strings[0] must be the empty string");
  }
  check.RepairStrings();
  for (int i = 0; i < batch->processes_size(); ++i) {
    const v1::Process& p = batch->processes(i);
    if (!check.ValidString(p.job()) || batch->strings(p.job()).empty()) {
      return check.Fail(absl::StrCat("process ", i, " has no job name"));
    }
    if (!check.ValidString(p.node())) {
      return check.Fail(absl::StrCat("process ", i, ": node index ", p.node(),
                                     " is out of range"));
    }
    if (p.world_size() < 0 || p.world_size() >= (1 << 30)) {
      return check.Fail(absl::StrCat("process ", i, ": world size ",
                                     p.world_size(), " is out of range"));
    }
    if (p.dropped() >= (uint64_t{1} << 62)) {
      return check.Fail(absl::StrCat("process ", i, ": dropped records ",
                                     p.dropped(), " is out of range"));
    }
  }
  for (int i = 0; i < batch->tracks_size(); ++i) {
    const v1::Track& t = batch->tracks(i);
    if (t.process() >= static_cast<uint32_t>(batch->processes_size())) {
      return check.Fail(absl::StrCat("track ", i, ": process index ",
                                     t.process(),
                                     " is out of range; the batch has ",
                                     batch->processes_size(), " processes"));
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
  absl::Status status = CheckSpanMessages(&check, batch);
  if (!status.ok()) return status;
  status = CheckTotals(&check, *batch);
  if (!status.ok()) return status;
  for (int i = 0; i < batch->rings_size(); ++i) {
    if (batch->rings(i).end() < batch->rings(i).begin()) {
      return check.Fail(absl::StrCat("ring range ", i, ": end ",
                                     batch->rings(i).end(), " is before begin ",
                                     batch->rings(i).begin()));
    }
  }
  decoded->resize(batch->chunks_size());
  for (int i = 0; i < batch->chunks_size(); ++i) {
    status = CheckChunk(&check, i, &(*decoded)[i]);
    if (!status.ok()) return status;
  }
  const v1::ClockModel& clock = batch->clock();
  if (HasClockModel(*batch)) {
    if (!check.ValidString(clock.node()) ||
        batch->strings(clock.node()).empty()) {
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
