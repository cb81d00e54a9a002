#include "import/imported_trace.h"

#include "gtest/gtest.h"
#include "wire/batch_shape.h"
#include "wire/batch_spans.h"
#include "wire/span_chunk.h"

namespace meridian {
namespace {

// A process of job "j" on node "n".
ProcessDesc JobProcess() {
  ProcessDesc p;
  p.job = "j";
  p.node = "n";
  return p;
}

ImportedTrace ThreeSpans() {
  ImportedTrace t;
  ProcessDesc p;
  p.job = "j";
  p.node = "n";
  p.rank = 2;
  t.processes.push_back(p);
  t.tracks.push_back({0, v1::TRACK_KIND_THREAD, 11, "main"});
  for (int i = 0; i < 3; ++i) {
    ImportedSpan s;
    s.name = i == 1 ? "b" : "a";
    s.start_ns = 1764000000000000000 + i * 1000;
    s.dur_ns = 10 + i;
    s.seq = i;
    s.args.push_back({"k", int64_t{i}});
    t.spans.push_back(s);
  }
  return t;
}

TEST(ImportedTraceTest, BatchesAreNumberedChunkedAndCarryTheOffset) {
  const std::vector<v1::Batch> batches =
      ToBatches(ThreeSpans(), "import-x", int64_t{-5000}, 2);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].agent_id(), "import-x");
  EXPECT_EQ(batches[0].batch_seq(), 1u);
  EXPECT_EQ(batches[1].batch_seq(), 2u);
  EXPECT_EQ(SpanCount(batches[0]), 2);
  EXPECT_EQ(SpanCount(batches[1]), 1);
  EXPECT_EQ(batches[0].spans_size(), 0);  // as chunks, like an agent's
  ASSERT_EQ(batches[1].chunks_size(), 1);
  SpanColumns columns;
  ASSERT_TRUE(DecodeSpanChunk(batches[1].chunks(0).data(), &columns).ok());
  ASSERT_EQ(columns.size(), 1u);
  EXPECT_EQ(columns.start_ns[0], 1764000000000002000);
  EXPECT_EQ(columns.dur_ns[0], 12);
  EXPECT_EQ(columns.seq[0], 2u);
  EXPECT_EQ(batches[1].strings(columns.name[0]), "a");
  ASSERT_EQ(columns.args.size(), 1u);
  const v1::ClockModel& clock = batches[1].clock();
  EXPECT_EQ(clock.offset_ns(), -5000);
  EXPECT_EQ(clock.reference_ns(), 1764000000000000000);
  EXPECT_EQ(batches[1].strings(clock.node()), "n");
  ASSERT_EQ(batches[1].processes_size(), 1);
  EXPECT_EQ(batches[1].processes(0).rank(), 2);
  EXPECT_EQ(batches[1].strings(batches[1].tracks(0).name()), "main");
  // Without an offset, no model: the query engine aligns the clocks.
  EXPECT_FALSE(
      ToBatches(ThreeSpans(), "import-x", std::nullopt)[0].has_clock());
}

TEST(ImportedTraceTest, TotalsWithoutSpansMakeOneBatch) {
  ImportedTrace t;
  ProcessDesc p;
  p.job = "j";
  p.node = "n";
  p.rank = 3;
  t.processes.push_back(p);
  ImportedOpTotals op;
  op.name = "MPI_Send";
  op.calls = 2;
  op.bytes = 16;
  op.dur_ns = 500;
  op.sizes.push_back({3, 2, 16, 500});
  t.op_totals.push_back(op);
  t.process_totals.push_back({{500, 9000, "mpitrace"}, 0});
  const std::vector<v1::Batch> batches = ToBatches(t, "import-y", int64_t{100});
  ASSERT_EQ(batches.size(), 1u);
  const v1::Batch& b = batches[0];
  EXPECT_FALSE(b.has_clock());  // no spans: nothing to place
  ASSERT_EQ(b.processes_size(), 1);
  EXPECT_EQ(b.processes(0).rank(), 3);
  ASSERT_EQ(b.op_totals_size(), 1);
  EXPECT_EQ(b.strings(b.op_totals(0).name()), "MPI_Send");
  EXPECT_EQ(b.op_totals(0).category(), v1::CATEGORY_MPI);
  EXPECT_EQ(b.op_totals(0).calls(), 2);
  ASSERT_EQ(b.op_totals(0).sizes_size(), 1);
  EXPECT_EQ(b.op_totals(0).sizes(0).log2(), 3);
  ASSERT_EQ(b.process_totals_size(), 1);
  EXPECT_EQ(b.process_totals(0).elapsed_ns(), 9000);
  EXPECT_EQ(b.strings(b.process_totals(0).source()), "mpitrace");
}

// A table of 20,000 ranks' times goes out in batches the collector takes.
TEST(ImportedTraceTest, ManyProcessesTotalsSpreadOverBatches) {
  ImportedTrace t;
  for (int r = 0; r < 20000; ++r) {
    ProcessDesc p = JobProcess();
    p.rank = r;
    t.processes.push_back(p);
    t.process_totals.push_back({{1000 + r, 9000, "mpitrace"}, r});
  }
  const std::vector<v1::Batch> batches = ToBatches(t, "import-z", std::nullopt);
  ASSERT_EQ(batches.size(), 3u);
  int64_t totals = 0;
  for (const v1::Batch& b : batches) {
    EXPECT_LE(b.processes_size(), 8192);
    EXPECT_EQ(b.processes_size(), b.process_totals_size());
    totals += b.process_totals_size();
  }
  EXPECT_EQ(totals, 20000);
  EXPECT_EQ(batches[2].batch_seq(), 3u);
  EXPECT_EQ(batches[2].processes(0).rank(), 16384);
}

// Every batch within the collector's bounds (wire/batch_shape.h), as it
// checks them: from the serialized bytes.
void ExpectWithinBounds(const std::vector<v1::Batch>& batches) {
  for (const v1::Batch& b : batches) {
    auto shape = ScanBatchShape(b.SerializeAsString());
    ASSERT_TRUE(shape.ok()) << shape.status();
    EXPECT_EQ(BatchShapeProblem(*shape), "") << "batch " << b.batch_seq();
  }
}

// A Chrome trace of 300,000 pids, each with a span: before, one batch of
// them all was refused whole ("batch has 50000 processes; at most 16384").
TEST(ImportedTraceTest, ManyProcessesGoInBatchesWithinTheCollectorsBounds) {
  ImportedTrace t;
  for (int pid = 0; pid < 300000; ++pid) {
    ProcessDesc p = JobProcess();
    p.pid = pid;
    t.processes.push_back(p);
    t.tracks.push_back({pid, v1::TRACK_KIND_THREAD, pid, "main"});
    ImportedSpan s;
    s.track = pid;
    s.name = "op";
    s.start_ns = 1764000000000000000 + pid;
    s.dur_ns = 5;
    t.spans.push_back(s);
  }
  const std::vector<v1::Batch> batches = ToBatches(t, "import-p", std::nullopt);
  ASSERT_EQ(batches.size(), 19u);  // 16,383 processes each, the last fewer
  ExpectWithinBounds(batches);
  int64_t spans = 0;
  for (const v1::Batch& b : batches) spans += SpanCount(b);
  EXPECT_EQ(spans, 300000);
}

// An mpitrace profile of 300,000 routines (one string each) and spans with
// many string args: batches stay under 262,144 strings.
TEST(ImportedTraceTest, ManyStringsGoInBatchesWithinTheCollectorsBounds) {
  ImportedTrace t;
  t.processes.push_back(JobProcess());
  t.tracks.push_back({0, v1::TRACK_KIND_THREAD, 1, "main"});
  for (int r = 0; r < 300000; ++r) {
    t.op_totals.push_back(
        {0, v1::CATEGORY_MPI, "routine_" + std::to_string(r), 1, 8, 100, {}});
  }
  for (int i = 0; i < 2000; ++i) {
    ImportedSpan s;
    s.name = "s";
    s.start_ns = 1764000000000000000 + i;
    s.dur_ns = 1;
    for (int a = 0; a < 50; ++a) {
      s.args.push_back({"k" + std::to_string(i) + "_" + std::to_string(a),
                        std::to_string(a * i)});
    }
    t.spans.push_back(s);
  }
  const std::vector<v1::Batch> batches = ToBatches(t, "import-r", std::nullopt);
  ASSERT_GE(batches.size(), 2u);
  ExpectWithinBounds(batches);
  int64_t ops = 0, spans = 0;
  for (const v1::Batch& b : batches) {
    ops += b.op_totals_size();
    spans += SpanCount(b);
  }
  EXPECT_EQ(ops, 300000);
  EXPECT_EQ(spans, 2000);
}

}  // namespace
}  // namespace meridian
