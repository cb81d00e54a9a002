#include "import/imported_trace.h"

#include <algorithm>

#include "wire/batch_shape.h"

namespace meridian {
namespace {

// Well under the collector's kMaxBatchProcesses (wire/batch_shape.h).
constexpr size_t kTotalsPerBatch = 8192;

}  // namespace

namespace {

void CopyOpTotals(const ImportedOpTotals& t, v1::ImportedOpTotals* op) {
  op->set_calls(t.calls);
  op->set_bytes(t.bytes);
  op->set_dur_ns(t.dur_ns);
  for (const ImportedSize& size : t.sizes) {
    v1::ImportedSizeTotals* out = op->add_sizes();
    out->set_log2(size.log2);
    out->set_calls(size.calls);
    out->set_bytes(size.bytes);
    out->set_dur_ns(size.dur_ns);
  }
}

// The fields of `s` beyond AddSpan's, its args' strings in `builder`'s
// table.
void CopySpan(const ImportedSpan& s, v1::Span* span, BatchBuilder& builder) {
  span->set_kind(s.kind);
  span->set_bytes(s.bytes);
  if (s.peer) span->set_peer(*s.peer);
  if (s.tag) span->set_tag(*s.tag);
  span->set_comm(s.comm);
  span->set_comm_size(s.comm_size);
  if (s.seq) span->set_seq(*s.seq);
  if (s.step) span->set_step(*s.step);
  if (s.partition) span->set_partition(*s.partition);
  span->set_correlation(s.correlation);
  span->set_value(s.value);
  for (const ImportedArg& a : s.args) {
    v1::Arg* arg = span->add_args();
    arg->set_key(builder.String(a.key));
    if (const auto* str = std::get_if<std::string>(&a.value)) {
      arg->set_str(builder.String(*str));
    } else if (const auto* i = std::get_if<int64_t>(&a.value)) {
      arg->set_int_(*i);
    } else {
      arg->set_real(std::get<double>(a.value));
    }
  }
}

}  // namespace

std::vector<v1::Batch> ToBatches(const ImportedTrace& trace,
                                 const std::string& agent_id,
                                 std::optional<int64_t> clock_offset_ns,
                                 size_t max_spans) {
  BatchBuilder builder(agent_id);
  std::vector<int> process_handle;
  for (const ProcessDesc& p : trace.processes) {
    process_handle.push_back(builder.DeclareProcess(p));
  }
  std::vector<int> track_handle;
  for (const ImportedTrack& t : trace.tracks) {
    track_handle.push_back(
        builder.DeclareTrack(process_handle[t.process], t.kind, t.id, t.name));
  }
  int64_t first_start = 0;
  for (const ImportedSpan& s : trace.spans) {
    first_start =
        first_start == 0 ? s.start_ns : std::min(first_start, s.start_ns);
  }
  std::vector<v1::Batch> batches;
  bool pending_totals = false;  // added to the builder, not yet taken
  auto take = [&] {
    v1::Batch batch = builder.Take();
    // A batch carries one model: an imported file's processes share a node.
    if (clock_offset_ns.has_value() && batch.processes_size() > 0 &&
        first_start != 0) {
      v1::ClockModel* clock = batch.mutable_clock();
      clock->set_node(batch.processes(0).node());
      clock->set_reference_ns(first_start);
      clock->set_offset_ns(*clock_offset_ns);
    }
    batches.push_back(ToChunks(std::move(batch)));
    pending_totals = false;
  };
  // Before adding what may bring `strings` new strings, a process and a
  // track: a new batch if the current one could go over the collector's
  // bounds (wire/batch_shape.h), so that a file of 300,000 processes or
  // routines goes in many batches rather than one refused whole.
  auto make_room = [&](size_t strings) {
    const bool full =
        builder.strings() + strings + 3 >
            static_cast<size_t>(kMaxBatchStrings) ||
        builder.processes() + 1 > static_cast<size_t>(kMaxBatchProcesses) ||
        builder.tracks() + 1 > static_cast<size_t>(kMaxBatchTracks) ||
        builder.spans() + builder.totals() + 1 >
            static_cast<size_t>(kMaxBatchItems);
    if (full && (builder.spans() > 0 || pending_totals)) take();
  };
  // Totals first, with the first spans.
  for (const ImportedOpTotals& t : trace.op_totals) {
    make_room(2);
    v1::ImportedOpTotals* op =
        builder.AddOpTotals(process_handle[t.process], t.category, t.name);
    CopyOpTotals(t, op);
    pending_totals = true;
  }
  // A batch holds at most kMaxBatchProcesses processes: a table of many
  // ranks' times (mpitrace's, of a large job) goes out in several.
  size_t in_batch = 0;
  for (const ImportedProcessTotals& t : trace.process_totals) {
    make_room(1);
    CopyProcessTotals(
        t, builder.AddProcessTotals(process_handle[t.process], t.source));
    pending_totals = true;
    if (++in_batch == kTotalsPerBatch) {
      take();
      in_batch = 0;
    }
  }
  for (const ImportedSpan& s : trace.spans) {
    make_room(1 + 2 * s.args.size());
    CopySpan(s,
             builder.AddSpan(track_handle[s.track], s.category, s.name,
                             s.start_ns, s.dur_ns),
             builder);
    if (builder.spans() >= max_spans) take();
  }
  if (builder.spans() > 0 || pending_totals) take();
  return batches;
}

}  // namespace meridian
