#include "query/export/kineto_trace.h"

#include <regex>
#include <sstream>

#include "gtest/gtest.h"

namespace meridian {
namespace {

// On Kineto's 3-month boundary: ts counts from here.
constexpr int64_t kBase = 216 * KinetoTraceWriter::kBasePeriodNs;

JobCatalog Catalog() {
  JobCatalog catalog;
  catalog.job.id = 1;
  catalog.job.name = "job";
  catalog.job.min_start_ns = kBase + 1000;
  catalog.job.ranks = 2;
  catalog.processes = {{1, "h0", 0, 0, 100}, {2, "h1", 1, 1, 101}};
  catalog.tracks = {
      {1, 1, v1::TRACK_KIND_THREAD, 100, "main"},
      {2, 1, v1::TRACK_KIND_GPU_STREAM, 9, "GPU 0 stream 7"},
      {3, 1, v1::TRACK_KIND_GPU_STREAM, 10, "GPU NCCL 00000000000000ab"},
      {4, 1, v1::TRACK_KIND_QUEUE, 3, ""},
      {5, 2, v1::TRACK_KIND_THREAD, 101, "main"}};
  catalog.ops = {{1, v1::CATEGORY_USER, "forward"},
                 {2, v1::CATEGORY_CUDA_RUNTIME, "cudaLaunchKernel"},
                 {3, v1::CATEGORY_CUDA_KERNEL, "gemm"},
                 {4, v1::CATEGORY_CUDA_RUNTIME, "ncclAllReduce"},
                 {5, v1::CATEGORY_NCCL, "AllReduce"},
                 {6, v1::CATEGORY_CUDA_MEMCPY, "Memcpy HtoD"},
                 {7, v1::CATEGORY_MPI, "MPI_Barrier"},
                 {8, v1::CATEGORY_USER, "loss"},
                 {9, v1::CATEGORY_NVTX, "mark"},
                 {10, v1::CATEGORY_USER, "push"}};
  return catalog;
}

StoredSpan Span(int64_t track, int64_t op, int64_t start, int64_t dur) {
  StoredSpan s;
  s.track_id = track;
  s.op_id = op;
  s.start_ns = kBase + start;
  s.dur_ns = dur;
  return s;
}

StoredArg Arg(const std::string& key, const std::string& value) {
  StoredArg a;
  a.key = key;
  a.type = StoredArg::Type::kString;
  a.str = value;
  return a;
}

StoredArg Arg(const std::string& key, int64_t value) {
  StoredArg a;
  a.key = key;
  a.type = StoredArg::Type::kInt;
  a.int_value = value;
  return a;
}

SpanSelection Rank(const JobCatalog& catalog, int32_t rank) {
  v1::SpanFilter filter;
  filter.add_ranks(rank);
  auto selection = SpanSelection::Make(catalog, filter);
  EXPECT_TRUE(selection.ok());
  return *selection;
}

// One rank's step: a user range, a kernel launch, an NCCL AllReduce (its
// enqueue and its execution), a copy, a queue span, an MPI call in the
// next step, a counter and an instant.
void WriteJob(TraceWriter& writer) {
  writer.Begin();
  v1::CriticalPathReply path;
  v1::PathSegment* segment = path.add_segments();
  segment->set_rank(0);
  segment->set_time_class(v1::TIME_CLASS_COMMUNICATION);
  segment->set_category(v1::CATEGORY_MPI);
  segment->set_name("MPI_Barrier");
  segment->set_start_ns(kBase + 6000);
  segment->set_dur_ns(100);
  writer.AddCriticalPath(path);

  StoredSpan forward = Span(1, 1, 1000, 5000);
  forward.step = 3;
  writer.Add(forward);
  StoredSpan launch = Span(1, 2, 1100, 20);
  launch.correlation = 0x10;
  launch.step = 3;
  writer.Add(launch);
  StoredSpan gemm = Span(2, 3, 1200, 300);
  gemm.correlation = 0x10;
  gemm.step = 3;
  gemm.args.push_back(Arg("grid", "[1,1,1]"));
  writer.Add(gemm);
  StoredSpan enqueue = Span(1, 4, 1300, 30);
  enqueue.correlation = 0x20;
  enqueue.step = 3;
  writer.Add(enqueue);
  StoredSpan allreduce = Span(3, 5, 1400, 1000);
  allreduce.correlation = 0x20;
  allreduce.comm = 0xab;
  allreduce.comm_size = 2;
  allreduce.seq = 1;
  allreduce.bytes = 4096;
  allreduce.step = 3;
  allreduce.args = {Arg("count", 1024), Arg("datatype", "ncclFloat32")};
  writer.Add(allreduce);
  StoredSpan copy = Span(2, 6, 1600, 100);  // its launch was not traced
  copy.correlation = 0x30;
  copy.bytes = 64;
  writer.Add(copy);
  writer.Add(Span(4, 10, 2000, 500));
  StoredSpan barrier = Span(1, 7, 6000, 100);
  barrier.step = 4;
  writer.Add(barrier);
  StoredSpan loss = Span(1, 8, 6200, 0);
  loss.kind = v1::SPAN_KIND_COUNTER;
  loss.value = 0.5;
  writer.Add(loss);
  StoredSpan mark = Span(1, 9, 6300, 0);
  mark.kind = v1::SPAN_KIND_INSTANT;
  writer.Add(mark);
  writer.Add(Span(5, 7, 6000, 100));  // rank 1: not in this file
}

TEST(KinetoTraceTest, WritesOneRankInKinetosLayout) {
  JobCatalog catalog = Catalog();
  SpanSelection selection = Rank(catalog, 0);
  ASSERT_TRUE(KinetoTraceWriter::CheckSelection(catalog, selection).ok());
  std::string out;
  KinetoTraceWriter writer(catalog, selection, [&](absl::string_view data) {
    out.append(data.data(), data.size());
    return true;
  });
  WriteJob(writer);
  ASSERT_TRUE(writer.End());
  EXPECT_EQ(writer.events(), 11);
  EXPECT_EQ(writer.base_time_ns(), kBase);
  EXPECT_EQ(out,
            R"json({
  "schemaVersion": 1,
  "deviceProperties": [],
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 2},
  "baseTimeNanoseconds": 1704075408000000000,
  "traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "ts": 1.000, "args": {"name": "rank 0 (h0)"}},
  {"ph": "M", "name": "thread_name", "pid": 100, "tid": 100, "ts": 1.000, "args": {"name": "main"}},
  {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "ts": 1.000, "args": {"name": "GPU 0"}},
  {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "ts": 1.000, "args": {"name": "stream 7"}},
  {"ph": "M", "name": "thread_name", "pid": 0, "tid": 1000001, "ts": 1.000, "args": {"name": "GPU NCCL 00000000000000ab"}},
  {"ph": "M", "name": "thread_name", "pid": 100, "tid": 1000000001, "ts": 1.000, "args": {"name": "queue 3"}},
  {"ph": "X", "cat": "Trace", "name": "rank 0: MPI_Barrier", "pid": "Spans", "tid": "critical path", "ts": 6.000, "dur": 0.100, "args": {"rank": 0, "class": "communication", "category": "mpi"}},
  {"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 100, "tid": 100, "ts": 1.000, "dur": 5.000, "args": {"External id": 1, "step": 3}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100, "ts": 1.100, "dur": 0.020, "args": {"External id": 1, "correlation": 16, "step": 3}},
  {"ph": "s", "id": 16, "pid": 100, "tid": 100, "ts": 1.100, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1.200, "dur": 0.300, "args": {"External id": 1, "device": 0, "stream": 7, "correlation": 16, "step": 3, "grid": "[1,1,1]"}},
  {"ph": "f", "id": 16, "pid": 0, "tid": 7, "ts": 1.200, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "cuda_runtime", "name": "ncclAllReduce", "pid": 100, "tid": 100, "ts": 1.300, "dur": 0.030, "args": {"External id": 1, "correlation": 32, "step": 3}},
  {"ph": "s", "id": 32, "pid": 100, "tid": 100, "ts": 1.300, "cat": "ac2g", "name": "ac2g"},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 0, "tid": 1000001, "ts": 1.400, "dur": 1.000, "args": {"External id": 1, "device": 0, "stream": 1000001, "correlation": 32, "bytes": 4096, "Collective name": "allreduce", "In msg nelems": 1024, "Out msg nelems": 1024, "Group size": 2, "dtype": "Float", "comm": "0xab", "comm_size": 2, "seq": 1, "step": 3, "count": 1024, "datatype": "ncclFloat32"}},
  {"ph": "f", "id": 32, "pid": 0, "tid": 1000001, "ts": 1.400, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 1.600, "dur": 0.100, "args": {"device": 0, "stream": 7, "correlation": 48, "bytes": 64}},
  {"ph": "X", "cat": "user_annotation", "name": "push", "pid": 100, "tid": 1000000001, "ts": 2.000, "dur": 0.500, "args": {"External id": 2}},
  {"ph": "X", "cat": "cpu_op", "name": "MPI_Barrier", "pid": 100, "tid": 100, "ts": 6.000, "dur": 0.100, "args": {"External id": 3, "step": 4}},
  {"ph": "C", "cat": "user_annotation", "name": "loss", "pid": 100, "tid": 100, "ts": 6.200, "args": {"loss": 0.5}},
  {"ph": "i", "cat": "cpu_instant_event", "name": "mark", "pid": 100, "tid": 100, "ts": 6.300, "s": "t", "args": {}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 100, "tid": 100, "ts": 1.000, "dur": 5.000, "args": {"External id": 4}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 100, "tid": 100, "ts": 6.000, "dur": 0.100, "args": {"External id": 5}}
  ]
}
)json");
}

// A torch.distributed allreduce (capture/torch's span, on its group's queue
// track): a CPU op with the collective and process-group args torch's
// profiler writes.
TEST(KinetoTraceTest, AC10dOperationIsACpuOpWithItsProcessGroup) {
  JobCatalog catalog = Catalog();
  catalog.ops.push_back({11, v1::CATEGORY_C10D, "allreduce"});
  SpanSelection selection = Rank(catalog, 0);
  std::string out;
  KinetoTraceWriter writer(catalog, selection, [&](absl::string_view data) {
    out.append(data.data(), data.size());
    return true;
  });
  writer.Begin();
  StoredSpan allreduce = Span(4, 11, 1000, 2000);
  allreduce.comm = 0xcd;
  allreduce.comm_size = 2;
  allreduce.seq = 6;
  allreduce.bytes = 1071144;
  allreduce.step = 1;
  allreduce.args = {Arg("backend", "gloo"), Arg("group", 0),
                    Arg("ranks", "[0, 1]"), Arg("work", "gloo:all_reduce")};
  writer.Add(allreduce);
  ASSERT_TRUE(writer.End());
  EXPECT_NE(
      out.find(
          R"json({"ph": "X", "cat": "cpu_op", "name": "allreduce", "pid": 100, "tid": 1000000001, "ts": 1.000, "dur": 2.000, "args": {"bytes": 1071144, "Collective name": "allreduce", "In msg nelems": 1071144, "Out msg nelems": 1071144, "Group size": 2, "dtype": "Byte", "Process Group Name": "0", "Process Group Ranks": "[0, 1]", "comm": "0xcd", "comm_size": 2, "seq": 6, "step": 1, "backend": "gloo", "group": 0, "ranks": "[0, 1]", "work": "gloo:all_reduce"}})json"),
      std::string::npos)
      << out;
}

TEST(KinetoTraceTest, HtaFindsTheRankOnItsLineBeforeTheEvents) {
  JobCatalog catalog = Catalog();
  SpanSelection selection = Rank(catalog, 1);
  std::string out;
  KinetoTraceWriter writer(catalog, selection, [&](absl::string_view data) {
    out.append(data.data(), data.size());
    return true;
  });
  WriteJob(writer);
  ASSERT_TRUE(writer.End());
  // HTA's scan: the first line matching "rank":\s+(\d+).
  std::istringstream lines(out);
  std::string line;
  const std::regex rank("\"rank\":\\s+(\\d+)");
  std::smatch match;
  while (std::getline(lines, line) && !std::regex_search(line, match, rank)) {
  }
  ASSERT_FALSE(match.empty());
  EXPECT_EQ(match[1], "1");
  EXPECT_LT(out.find("\"distributedInfo\""), out.find("\"traceEvents\""));
  EXPECT_NE(out.find("\"name\": \"MPI_Barrier\", \"pid\": 101, \"tid\": 101"),
            std::string::npos);
  EXPECT_EQ(out.find("\"pid\": 100"), std::string::npos);
}

TEST(KinetoTraceTest, RefusesSelectionsOfOtherThanOneRank) {
  JobCatalog catalog = Catalog();
  v1::SpanFilter all;
  auto selection = SpanSelection::Make(catalog, all);
  ASSERT_TRUE(selection.ok());
  const absl::Status status =
      KinetoTraceWriter::CheckSelection(catalog, *selection);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("selects 2 processes"), std::string::npos)
      << status;
}

TEST(KinetoTraceTest, KeepsImportedProfilerStepsAndMakesNoOthers) {
  JobCatalog catalog = Catalog();
  catalog.ops.push_back({11, v1::CATEGORY_USER, "ProfilerStep#3"});
  SpanSelection selection = Rank(catalog, 0);
  std::string out;
  KinetoTraceWriter writer(catalog, selection, [&](absl::string_view data) {
    out.append(data.data(), data.size());
    return true;
  });
  writer.Begin();
  StoredSpan step = Span(1, 11, 1000, 5000);
  step.step = 3;
  writer.Add(step);
  StoredSpan forward = Span(1, 1, 1000, 100);
  forward.step = 3;
  writer.Add(forward);
  ASSERT_TRUE(writer.End());
  EXPECT_NE(out.find("\"name\": \"ProfilerStep#3\""), std::string::npos);
  EXPECT_EQ(out.find("ProfilerStep#3"), out.rfind("ProfilerStep#3"));
}

TEST(KinetoTraceTest, StopsWhenTheSinkDoes) {
  JobCatalog catalog = Catalog();
  SpanSelection selection = Rank(catalog, 0);
  int calls = 0;
  KinetoTraceWriter writer(
      catalog, selection,
      [&](absl::string_view) {
        return ++calls < 3;  // the reader goes away at the third piece
      },
      /*chunk_bytes=*/1);
  writer.Begin();
  writer.Add(Span(1, 7, 1000, 100));
  EXPECT_TRUE(writer.ok());
  writer.Add(Span(1, 7, 2000, 100));
  EXPECT_FALSE(writer.ok());
  writer.Add(Span(1, 7, 3000, 100));
  EXPECT_EQ(writer.events(), 2);
  EXPECT_FALSE(writer.End());
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace meridian
