#include "wire/batch_validator.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "wire/batch_builder.h"
#include "wire/span_chunk.h"

namespace meridian {
namespace {

constexpr int64_t kT = 1700000000000000000;

v1::Batch ValidBatch() {
  BatchBuilder builder("node-a");
  int p = builder.DeclareProcess({"job", "host", 0, 0, 42});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 7, "main");
  builder.AddSpan(t, v1::CATEGORY_MPI, "MPI_Send", kT, 100)->set_bytes(8);
  builder.AddSpan(t, v1::CATEGORY_USER, "say \"hi\"\n'; DROP TABLE spans;--",
                  kT + 200, 0);
  return builder.Take();
}

struct Checked {
  absl::Status status;
  BatchRepairs repairs;
  v1::Batch batch;  // as repaired
  std::vector<SpanColumns> decoded;
};

Checked Check(v1::Batch batch) {
  Checked out;
  out.status = ValidateBatch(&batch, &out.decoded, &out.repairs);
  out.batch = std::move(batch);
  return out;
}

// Why the batch is refused.
std::string Message(const v1::Batch& batch) {
  return std::string(Check(batch).status.message());
}

// What was dropped from an accepted batch: "N: first problem".
std::string Dropped(const v1::Batch& batch) {
  Checked checked = Check(batch);
  if (!checked.status.ok()) return std::string(checked.status.message());
  return absl::StrCat(checked.repairs.spans_dropped, ": ",
                      checked.repairs.first_problem);
}

TEST(BatchValidatorTest, AcceptsAWellFormedBatchWithAwkwardNames) {
  Checked checked = Check(ValidBatch());
  EXPECT_TRUE(checked.status.ok());
  EXPECT_EQ(checked.repairs.spans_dropped, 0u);
  EXPECT_EQ(checked.repairs.strings_repaired, 0u);
  EXPECT_EQ(checked.batch.spans_size(), 2);
}

TEST(BatchValidatorTest, DropsASpanWithANegativeDuration) {
  v1::Batch batch = ValidBatch();
  batch.mutable_spans(0)->set_dur_ns(-5);
  EXPECT_EQ(Dropped(batch),
            "1: span 0 (\"MPI_Send\"): dur_ns is -5; durations must be >= 0");
}

TEST(BatchValidatorTest, DropsSpansWithAbsurdTimes) {
  v1::Batch batch = ValidBatch();
  batch.mutable_spans(1)->set_start_ns(12345);
  EXPECT_EQ(Dropped(batch),
            "1: span 1 (\"say \\x22hi\\x22\\x0a'; DROP TABLE spans;--\"): "
            "start_ns 12345 is not a Unix-epoch time in nanoseconds between "
            "the years 2000 and 2100");
  batch = ValidBatch();
  batch.mutable_spans(0)->set_dur_ns(kMaxDurationNs + 1);
  EXPECT_EQ(Dropped(batch),
            "1: span 0 (\"MPI_Send\"): dur_ns is 2592000000000001; durations "
            "must be at most 30 days (2592000000000000 ns)");
}

TEST(BatchValidatorTest, RefusesStructureOutOfRangeAndDropsSpansWithBadNames) {
  v1::Batch batch = ValidBatch();
  batch.mutable_spans(0)->set_track(3);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": span 0: track index 3 is out of "
            "range; the batch has 1 tracks");
  batch = ValidBatch();
  batch.mutable_spans(0)->set_name(99);
  EXPECT_EQ(Dropped(batch),
            "1: span 0: name index 99 is out of range; the batch has 6 "
            "strings");
  batch = ValidBatch();
  batch.mutable_tracks(0)->set_process(1);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": track 0: process index 1 is out of "
            "range; the batch has 1 processes");
}

TEST(BatchValidatorTest, DropsEmptyNamesAndUnknownEnumsRefusesNoJob) {
  v1::Batch batch = ValidBatch();
  batch.mutable_spans(0)->set_name(0);
  EXPECT_EQ(Dropped(batch), "1: span 0 (\"\"): name is empty");
  batch = ValidBatch();
  batch.mutable_spans(0)->set_category(static_cast<v1::Category>(77));
  EXPECT_EQ(Dropped(batch),
            "1: span 0 (\"MPI_Send\"): category 77 is not a known category");
  batch = ValidBatch();
  batch.mutable_processes(0)->set_job(0);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": process 0 has no job name");
  batch = ValidBatch();
  batch.mutable_processes(0)->set_world_size(-4);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": process 0: world size -4 is out "
            "of range");
  batch.mutable_processes(0)->set_world_size(64);
  EXPECT_EQ(Message(batch), "");
  batch.mutable_processes(0)->set_dropped(uint64_t{1} << 62);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": process 0: dropped records "
            "4611686018427387904 is out of range");
  batch.mutable_processes(0)->set_dropped((uint64_t{1} << 62) - 1);
  EXPECT_EQ(Message(batch), "");
}

TEST(BatchValidatorTest, RejectsBadIdentityAndStringTable) {
  v1::Batch batch = ValidBatch();
  batch.set_agent_id("");
  EXPECT_EQ(Message(batch), "batch 1 from agent \"\": agent_id is empty");
  batch = ValidBatch();
  batch.set_batch_seq(0);
  EXPECT_EQ(Message(batch),
            "batch 0 from agent \"node-a\": batch_seq is 0; sequence numbers "
            "start at 1");
  batch = ValidBatch();
  batch.set_strings(0, "x");
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": strings[0] must be the empty "
            "string");
}

TEST(BatchValidatorTest, DropsNonFiniteNumbers) {
  v1::Batch batch = ValidBatch();
  batch.mutable_spans(0)->set_value(NAN);
  EXPECT_EQ(Dropped(batch),
            "1: span 0 (\"MPI_Send\"): value is not a finite number");
  batch = ValidBatch();
  v1::Arg* arg = batch.mutable_spans(0)->add_args();
  arg->set_key(1);
  arg->set_real(INFINITY);
  EXPECT_EQ(Dropped(batch),
            "1: span 0 (\"MPI_Send\"): arg 0 is not a finite number");
}

TEST(BatchValidatorTest, AcceptsAClockModelAndRejectsOneWithoutANode) {
  v1::Batch batch = ValidBatch();
  v1::ClockModel* clock = batch.mutable_clock();
  clock->set_reference_ns(kT);
  clock->set_offset_ns(-1200);
  clock->set_drift_ppb(3000);
  clock->set_uncertainty_ns(15);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": clock: node index 0 does not "
            "name a node; a clock model says whose clock it is");
  for (int i = 0; i < batch.strings_size(); ++i) {
    if (batch.strings(i) == "host") clock->set_node(i);
  }
  EXPECT_TRUE(Check(batch).status.ok());
  clock->set_uncertainty_ns(-1);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": clock: uncertainty_ns -1 is "
            "negative");
  clock->set_uncertainty_ns(15);
  clock->set_drift_ppb(-2000000);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": clock: drift_ppb -2000000 is "
            "beyond +-1000000 (1000 ppm)");
  clock->set_drift_ppb(0);
  clock->set_reference_ns(5);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": clock: reference_ns 5 is "
            "outside years 2000..2100");
}

// Statistics another tool measured: all or nothing.
TEST(BatchValidatorTest, AcceptsTotalsAndRefusesWrongOnes) {
  v1::Batch batch = ValidBatch();
  int name = 0;
  for (int i = 0; i < batch.strings_size(); ++i) {
    if (batch.strings(i) == "MPI_Send") name = i;
  }
  v1::ImportedOpTotals* op = batch.add_op_totals();
  op->set_category(v1::CATEGORY_MPI);
  op->set_name(name);
  op->set_calls(10);
  op->set_bytes(800);
  op->set_dur_ns(5000);
  v1::ImportedSizeTotals* size = op->add_sizes();
  size->set_log2(3);
  size->set_calls(10);
  size->set_bytes(800);
  size->set_dur_ns(5000);
  v1::ImportedProcessTotals* process = batch.add_process_totals();
  process->set_comm_ns(5000);
  process->set_elapsed_ns(90000);
  EXPECT_TRUE(Check(batch).status.ok());

  const std::string head = "batch 1 from agent \"node-a\": ";
  size->set_calls(11);
  EXPECT_EQ(Message(batch), head +
                                "op totals 0: its size buckets hold 11 "
                                "calls, more than its 10");
  size->set_calls(10);
  op->add_sizes()->set_log2(3);
  EXPECT_EQ(Message(batch), head +
                                "op totals 0: size bucket log2 3 is not "
                                "ascending in -1..62 (after 3)");
  op->mutable_sizes()->RemoveLast();
  op->set_category(v1::CATEGORY_USER);
  EXPECT_EQ(Message(batch),
            head + "op totals 0: category 9 is not MPI (1) or NCCL (2)");
  op->set_category(v1::CATEGORY_NCCL);
  op->set_dur_ns(-1);
  EXPECT_EQ(Message(batch), head + "op totals 0: dur_ns -1 is negative");
  op->set_dur_ns(5000);
  op->set_process(1);
  EXPECT_EQ(Message(batch),
            head + "op totals 0: process index 1 is out of range");
  op->set_process(0);
  op->set_name(0);
  EXPECT_EQ(Message(batch), head + "op totals 0: no valid name string");
  op->set_name(name);
  process->set_elapsed_ns(-5);
  EXPECT_EQ(Message(batch),
            head + "process totals 0: elapsed_ns -5 is negative");
  process->set_elapsed_ns(5);
  process->set_max_rss_bytes(-1);
  EXPECT_EQ(Message(batch),
            head + "process totals 0: max_rss_bytes -1 is negative");
  process->set_max_rss_bytes(1 << 20);
  process->set_context_switches(-2);
  EXPECT_EQ(Message(batch),
            head + "process totals 0: context_switches -2 is negative");
  process->set_context_switches(7);
  EXPECT_TRUE(Check(batch).status.ok());
  process->set_source(100000);
  EXPECT_EQ(Message(batch),
            head + "process totals 0: source index 100000 is out of range");
}

// The batch's spans as one wire chunk of ring 0's records 10 and 11.
v1::Batch ChunkBatch(SpanColumns* columns = nullptr) {
  v1::Batch batch = ValidBatch();
  SpanColumns c;
  for (int i = 0; i < batch.spans_size(); ++i) {
    const v1::Span& span = batch.spans(i);
    c.Add(span.start_ns(), span.dur_ns(), span.name(), span.category(), 0);
    c.bytes.back() = span.bytes();
    c.record.back() = 10 + i;
  }
  if (columns != nullptr) *columns = c;
  batch.clear_spans();
  v1::RingRange* range = batch.add_rings();
  range->set_begin(10);
  range->set_end(12);
  v1::SpanChunk* chunk = batch.add_chunks();
  chunk->set_count(2);
  chunk->set_ring(1);
  chunk->set_first_start_ns(kT);
  chunk->set_data(*EncodeSpanChunk(c));
  return batch;
}

TEST(BatchValidatorTest, AcceptsAWellFormedChunk) {
  Checked checked = Check(ChunkBatch());
  EXPECT_TRUE(checked.status.ok()) << checked.status;
  ASSERT_EQ(checked.decoded.size(), 1u);
  EXPECT_EQ(checked.decoded[0].size(), 2u);
}

TEST(BatchValidatorTest, NamesTheChunkAndTheColumnThatIsWrong) {
  v1::Batch batch = ChunkBatch();
  batch.mutable_chunks(0)->set_data("\x01nonsense");
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": chunk 0 (track 0): span chunk: "
            "not a zstd frame with a known size");
  batch = ChunkBatch();
  batch.mutable_chunks(0)->set_count(3);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": chunk 0 (track 0): count is 3 "
            "but its data holds 2 spans");
  batch = ChunkBatch();
  batch.mutable_chunks(0)->set_track(4);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": chunk 0 (track 4): track index "
            "is out of range; the batch has 1 tracks");
  SpanColumns c;
  batch = ChunkBatch(&c);
  c.dur_ns[1] = -7;
  batch.mutable_chunks(0)->set_data(*EncodeSpanChunk(c));
  EXPECT_EQ(Dropped(batch),
            "1: chunk 0 (track 0), span 1 (\"say \\x22hi\\x22\\x0a'; DROP "
            "TABLE spans;--\"): dur_ns is -7; durations must be >= 0");
  batch = ChunkBatch(&c);
  c.name[0] = 99;
  batch.mutable_chunks(0)->set_data(*EncodeSpanChunk(c));
  EXPECT_EQ(Dropped(batch),
            "1: chunk 0 (track 0), span 0: name index 99 is out of range; the "
            "batch has 6 strings");
  batch = ChunkBatch(&c);
  c.record[1] = 12;
  batch.mutable_chunks(0)->set_data(*EncodeSpanChunk(c));
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": chunk 0 (track 0), span 1: "
            "record 12 is outside its ring range [10, 12)");
  batch = ChunkBatch();
  batch.mutable_rings(0)->set_end(9);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": ring range 0: end 9 is before "
            "begin 10");
}

// One process's bad record costs only itself: the batch also carries
// another job's spans, which are stored (before: the whole batch was
// refused, and the other job's spans with it).
TEST(BatchValidatorTest, OneBadRecordCostsOnlyItself) {
  BatchBuilder builder("node-a");
  int a = builder.DeclareProcess({"job-a", "host", 0, 0, 42});
  int b = builder.DeclareProcess({"job-b", "host", 0, 0, 43});
  int ta = builder.DeclareTrack(a, v1::TRACK_KIND_THREAD, 42, "main");
  int tb = builder.DeclareTrack(b, v1::TRACK_KIND_THREAD, 43, "main");
  builder.AddSpan(ta, v1::CATEGORY_MPI, "MPI_Send", kT, 100)->set_bytes(-8);
  builder.AddSpan(ta, v1::CATEGORY_MPI, "MPI_Recv", kT, 100);
  builder.AddSpan(tb, v1::CATEGORY_USER, "step", kT, 31LL * 86400 * 1000000000);
  builder.AddSpan(tb, v1::CATEGORY_USER, "", kT, 5);
  builder.AddSpan(tb, v1::CATEGORY_USER, std::string(70 * 1024, 'x'), kT, 5);
  builder.AddSpan(tb, v1::CATEGORY_USER, "forward", -2208988800000000000, 5);
  builder.AddSpan(tb, v1::CATEGORY_USER, "backward", kT, 5);
  Checked checked = Check(builder.Take());
  ASSERT_TRUE(checked.status.ok()) << checked.status;
  EXPECT_EQ(checked.repairs.spans_dropped, 5u);
  EXPECT_EQ(checked.repairs.first_problem,
            "span 0 (\"MPI_Send\"): bytes is -8; must be >= 0");
  EXPECT_EQ(checked.repairs.strings_repaired, 1u);  // the 70 KB name, cut
  ASSERT_EQ(checked.batch.spans_size(), 2);
  EXPECT_EQ(checked.batch.strings(checked.batch.spans(0).name()), "MPI_Recv");
  EXPECT_EQ(checked.batch.strings(checked.batch.spans(1).name()), "backward");
  for (const std::string& s : checked.batch.strings()) {
    EXPECT_LE(s.size(), kMaxStringBytes);
  }
}

// A name the probe cut inside a character, or any other bytes: the batch
// still parses (strings are bytes on the wire) and is stored with the
// sequence replaced (before: unparseable, and retried for ever).
TEST(BatchValidatorTest, RepairsInvalidUtf8AndKeepsTheSpan) {
  v1::Batch batch = ValidBatch();
  const uint32_t cut = batch.strings_size();
  batch.add_strings("all\xE2\x82");  // a euro sign cut after two bytes
  batch.mutable_spans(0)->set_name(cut);
  v1::Batch parsed;
  ASSERT_TRUE(parsed.ParseFromString(batch.SerializeAsString()));
  Checked checked = Check(parsed);
  ASSERT_TRUE(checked.status.ok()) << checked.status;
  EXPECT_EQ(checked.repairs.spans_dropped, 0u);
  EXPECT_EQ(checked.repairs.strings_repaired, 1u);
  EXPECT_EQ(checked.batch.strings(checked.batch.spans(0).name()),
            "all\xEF\xBF\xBD");
}

TEST(BatchValidatorTest, ABuilderNeverSendsInvalidUtf8) {
  BatchBuilder builder("node-a");
  int p = builder.DeclareProcess({"job\xFF", "host", 0, 0, 42});
  int t = builder.DeclareTrack(p, v1::TRACK_KIND_THREAD, 7, "main");
  builder.AddSpan(t, v1::CATEGORY_MPI, "x\xC0\xAF", kT, 100);
  Checked checked = Check(builder.Take());
  ASSERT_TRUE(checked.status.ok()) << checked.status;
  EXPECT_EQ(checked.repairs.strings_repaired, 0u);
  EXPECT_EQ(checked.batch.strings(checked.batch.spans(0).name()),
            "x\xEF\xBF\xBD");
  EXPECT_EQ(checked.batch.strings(checked.batch.processes(0).job()),
            "job\xEF\xBF\xBD");
}

TEST(BatchValidatorTest, DropsBadSpansFromAChunkAndKeepsTheRest) {
  SpanColumns c;
  v1::Batch batch = ChunkBatch(&c);
  c.bytes[0] = -1;
  batch.mutable_chunks(0)->set_data(*EncodeSpanChunk(c));
  Checked checked = Check(batch);
  ASSERT_TRUE(checked.status.ok()) << checked.status;
  EXPECT_EQ(checked.repairs.spans_dropped, 1u);
  ASSERT_EQ(checked.decoded[0].size(), 1u);
  EXPECT_EQ(checked.decoded[0].record[0], 11u);
  EXPECT_EQ(checked.decoded[0].arg_end.size(), 1u);
  c.bytes[1] = -1;
  batch.mutable_chunks(0)->set_data(*EncodeSpanChunk(c));
  checked = Check(batch);
  ASSERT_TRUE(checked.status.ok()) << checked.status;
  EXPECT_EQ(checked.repairs.spans_dropped, 2u);
  EXPECT_EQ(checked.decoded[0].size(), 0u);
}

}  // namespace
}  // namespace meridian
