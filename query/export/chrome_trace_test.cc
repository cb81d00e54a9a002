#include "query/export/chrome_trace.h"

#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr int64_t kT = 1700000000000000000;

JobCatalog Catalog() {
  JobCatalog catalog;
  catalog.job.id = 1;
  catalog.job.name = "job \"q\"";
  catalog.job.min_start_ns = kT;
  catalog.processes = {{1, "h0", 0, 0, 100}, {2, "h1", 1, 0, 101, 42}};
  catalog.job.spans_dropped = 42;
  catalog.tracks = {{1, 1, v1::TRACK_KIND_THREAD, 55, "main"},
                    {2, 1, v1::TRACK_KIND_GPU_STREAM, 7, ""},
                    {3, 2, v1::TRACK_KIND_THREAD, 56, "main"}};
  catalog.ops = {{1, v1::CATEGORY_MPI, "MPI_Allreduce"},
                 {2, v1::CATEGORY_CUDA_KERNEL, "k<\"x\">\n"},
                 {3, v1::CATEGORY_USER, "loss"},
                 {4, v1::CATEGORY_CUDA_RUNTIME, "cudaLaunchKernel"}};
  return catalog;
}

TEST(ChromeTraceTest, WritesMetadataThenEventsWithExactFields) {
  JobCatalog catalog = Catalog();
  v1::SpanFilter filter;
  auto selection = SpanSelection::Make(catalog, filter);
  ASSERT_TRUE(selection.ok());
  std::string out;
  int chunks = 0;
  ChromeTraceWriter writer(
      catalog, *selection,
      [&](absl::string_view data) {
        out.append(data.data(), data.size());
        ++chunks;
        return true;
      },
      /*chunk_bytes=*/1);
  writer.Begin();
  StoredSpan mpi;
  mpi.start_ns = kT + 1500;
  mpi.dur_ns = 2001;
  mpi.track_id = 3;
  mpi.op_id = 1;
  mpi.bytes = 8;
  mpi.comm = 0xabc;
  mpi.comm_size = 2;
  mpi.seq = 4;
  mpi.step = 1;
  writer.Add(mpi);
  StoredSpan kernel;
  kernel.start_ns = kT + 2000;
  kernel.dur_ns = 5;
  kernel.track_id = 2;
  kernel.op_id = 2;
  kernel.correlation = 0x10;
  StoredArg grid;
  grid.key = "grid";
  grid.type = StoredArg::Type::kString;
  grid.str = "[1,1,1]";
  kernel.args.push_back(grid);
  writer.Add(kernel);
  StoredSpan launch;
  launch.start_ns = kT + 1900;
  launch.dur_ns = 50;
  launch.track_id = 1;
  launch.op_id = 4;
  launch.correlation = 0x10;
  writer.Add(launch);
  StoredSpan loss;
  loss.start_ns = kT + 3000;
  loss.track_id = 1;
  loss.op_id = 3;
  loss.kind = v1::SPAN_KIND_COUNTER;
  loss.value = 0.5;
  writer.Add(loss);
  ASSERT_TRUE(writer.End());
  EXPECT_EQ(writer.events(), 4);
  EXPECT_EQ(chunks, 6);  // metadata, one per event, the end
  EXPECT_EQ(
      out,
      "{\"traceEvents\":[\n"
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":"
      "\"rank 0 (h0)\"}},\n"
      "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":1,\"args\":{"
      "\"sort_index\":1}},\n"
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"args\":{\"name\":"
      "\"rank 1 (h1)\"}},\n"
      "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":2,\"args\":{"
      "\"sort_index\":2}},\n"
      "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":2,\"args\":{"
      "\"labels\":\"42 spans dropped (full rings)\"}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,\"args\":{"
      "\"name\":\"main\"}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":1,"
      "\"args\":{\"sort_index\":1}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":2,\"args\":{"
      "\"name\":\"stream 7\"}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":2,"
      "\"args\":{\"sort_index\":1000002}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":2,\"tid\":1,\"args\":{"
      "\"name\":\"main\"}},\n"
      "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":2,\"tid\":1,"
      "\"args\":{\"sort_index\":1}},\n"
      "{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":\"MPI_Allreduce\",\"pid\":2,"
      "\"tid\":1,\"ts\":1.500,\"dur\":2.001,\"args\":{\"bytes\":8,\"comm\":"
      "\"0xabc\",\"comm_size\":2,\"seq\":4,\"step\":1}},\n"
      "{\"ph\":\"X\",\"cat\":\"cuda_kernel\",\"name\":\"k<\\\"x\\\">\\n\","
      "\"pid\":1,\"tid\":2,\"ts\":2.000,\"dur\":0.005,\"args\":{"
      "\"correlation\":\"0x10\",\"grid\":\"[1,1,1]\"}},\n"
      "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\","
      "\"id\":\"1:10\",\"pid\":1,\"tid\":2,\"ts\":2.000},\n"
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
      "\"pid\":1,\"tid\":1,\"ts\":1.900,\"dur\":0.050,\"args\":{"
      "\"correlation\":\"0x10\"}},\n"
      "{\"ph\":\"s\",\"cat\":\"launch\",\"name\":\"launch\","
      "\"id\":\"1:10\",\"pid\":1,\"tid\":1,\"ts\":1.900},\n"
      "{\"ph\":\"C\",\"cat\":\"user\",\"name\":\"loss\",\"pid\":1,\"tid\":1,"
      "\"ts\":3.000,\"args\":{\"loss\":0.5}}\n"
      "],\"displayTimeUnit\":\"ns\",\"otherData\":{\"job\":\"job \\\"q\\\"\","
      "\"epoch_ns\":1700000000000000000,\"spans_dropped\":42,"
      "\"generator\":\"meridian\"}}\n");
}

TEST(ChromeTraceTest, OmitsUnselectedRanksAndStopsWhenTheSinkDoes) {
  JobCatalog catalog = Catalog();
  v1::SpanFilter filter;
  filter.add_ranks(1);
  auto selection = SpanSelection::Make(catalog, filter);
  ASSERT_TRUE(selection.ok());
  std::string out;
  ChromeTraceWriter writer(catalog, *selection, [&](absl::string_view data) {
    out.append(data.data(), data.size());
    return false;  // the reader went away after the first piece
  });
  writer.Begin();
  EXPECT_EQ(out.find("rank 0"), std::string::npos);
  EXPECT_NE(out.find("rank 1 (h1)"), std::string::npos);
  EXPECT_FALSE(writer.ok());
  EXPECT_FALSE(writer.End());
}

// A matched send and receive get one arrow; off for a time window.
TEST(ChromeTraceTest, MatchedMessagesGetFlowArrows) {
  JobCatalog catalog = Catalog();
  catalog.ops.push_back({5, v1::CATEGORY_MPI, "MPI_Send"});
  catalog.ops.push_back({6, v1::CATEGORY_MPI, "MPI_Recv"});
  auto selection = SpanSelection::Make(catalog, v1::SpanFilter());
  ASSERT_TRUE(selection.ok());
  for (bool flows : {true, false}) {
    std::string out;
    ChromeTraceWriter writer(catalog, *selection, [&](absl::string_view d) {
      out.append(d.data(), d.size());
      return true;
    });
    writer.set_message_flows(flows);
    writer.Begin();
    StoredSpan send;
    send.start_ns = kT + 1000;
    send.dur_ns = 10;
    send.track_id = 1;  // rank 0
    send.op_id = 5;
    send.peer = 1;
    send.tag = 3;
    send.comm = 0x7;
    writer.Add(send);
    StoredSpan recv = send;
    recv.start_ns = kT + 1004;
    recv.track_id = 3;  // rank 1
    recv.op_id = 6;
    recv.peer = 0;
    writer.Add(recv);
    ASSERT_TRUE(writer.End());
    const std::string s_event =
        "{\"ph\":\"s\",\"cat\":\"message\",\"name\":\"message\",\"id\":"
        "\"7:0>1:3#0\",\"pid\":1,\"tid\":1,\"ts\":1.000}";
    const std::string f_event =
        "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"message\",\"name\":\"message\","
        "\"id\":\"7:0>1:3#0\",\"pid\":2,\"tid\":1,\"ts\":1.013}";
    EXPECT_EQ(out.find(s_event) != std::string::npos, flows) << out;
    EXPECT_EQ(out.find(f_event) != std::string::npos, flows) << out;
  }
}

}  // namespace
}  // namespace meridian
