#include "wire/batch_validator.h"

#include <cmath>

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

std::string Message(const v1::Batch& batch) {
  return std::string(ValidateBatch(batch).message());
}

TEST(BatchValidatorTest, AcceptsAWellFormedBatchWithAwkwardNames) {
  EXPECT_TRUE(ValidateBatch(ValidBatch()).ok());
}

TEST(BatchValidatorTest, RejectsNegativeDuration) {
  v1::Batch batch = ValidBatch();
  batch.mutable_spans(0)->set_dur_ns(-5);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": span 0 (\"MPI_Send\"): dur_ns is "
            "-5; durations must be >= 0");
}

TEST(BatchValidatorTest, RejectsAbsurdTimestamps) {
  v1::Batch batch = ValidBatch();
  batch.mutable_spans(1)->set_start_ns(12345);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": span 1 (\"say \\x22hi\\x22\\x0a'; "
            "DROP TABLE spans;--\"): start_ns 12345 is not a Unix-epoch time "
            "in nanoseconds between the years 2000 and 2100");
  batch = ValidBatch();
  batch.mutable_spans(0)->set_dur_ns(kMaxDurationNs + 1);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": span 0 (\"MPI_Send\"): dur_ns is "
            "2592000000000001; durations must be at most 30 days "
            "(2592000000000000 ns)");
}

TEST(BatchValidatorTest, RejectsIndexesOutOfRange) {
  v1::Batch batch = ValidBatch();
  batch.mutable_spans(0)->set_track(3);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": span 0 (\"MPI_Send\"): track index "
            "3 is out of range; the batch has 1 tracks");
  batch = ValidBatch();
  batch.mutable_spans(0)->set_name(99);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": span 0: name index 99 is out of "
            "range; the batch has 6 strings");
  batch = ValidBatch();
  batch.mutable_tracks(0)->set_process(1);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": track 0: process index 1 is out of "
            "range; the batch has 1 processes");
}

TEST(BatchValidatorTest, RejectsEmptyNamesAndUnknownEnums) {
  v1::Batch batch = ValidBatch();
  batch.mutable_spans(0)->set_name(0);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": span 0 (\"\"): name is empty");
  batch = ValidBatch();
  batch.mutable_spans(0)->set_category(static_cast<v1::Category>(77));
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": span 0 (\"MPI_Send\"): category 77 "
            "is not a known category");
  batch = ValidBatch();
  batch.mutable_processes(0)->set_job(0);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": process 0 has no job name");
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

TEST(BatchValidatorTest, RejectsNonFiniteNumbers) {
  v1::Batch batch = ValidBatch();
  batch.mutable_spans(0)->set_value(NAN);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": span 0 (\"MPI_Send\"): value is "
            "not a finite number");
  batch = ValidBatch();
  v1::Arg* arg = batch.mutable_spans(0)->add_args();
  arg->set_key(1);
  arg->set_real(INFINITY);
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": span 0 (\"MPI_Send\"): arg 0 is "
            "not a finite number");
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
  EXPECT_TRUE(ValidateBatch(batch).ok());
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
  EXPECT_TRUE(ValidateBatch(ChunkBatch()).ok()) << Message(ChunkBatch());
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
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": chunk 0 (track 0), span 1 "
            "(\"say \\x22hi\\x22\\x0a'; DROP TABLE spans;--\"): dur_ns is -7; "
            "durations must be >= 0");
  batch = ChunkBatch(&c);
  c.name[0] = 99;
  batch.mutable_chunks(0)->set_data(*EncodeSpanChunk(c));
  EXPECT_EQ(Message(batch),
            "batch 1 from agent \"node-a\": chunk 0 (track 0), span 0: name "
            "index 99 is out of range; the batch has 6 strings");
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

}  // namespace
}  // namespace meridian
