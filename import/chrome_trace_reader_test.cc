#include "import/chrome_trace_reader.h"

#include <algorithm>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace meridian {
namespace {

constexpr int64_t kEpoch = 1764000000000000000;  // 2025-11-24 16:00:00 UTC

ImportedTrace Read(const std::string& json, ImportOptions options = {}) {
  if (options.file.empty()) options.file = "t.json";
  auto trace = ReadChromeTrace(json, options);
  EXPECT_TRUE(trace.ok()) << trace.status();
  return trace.ok() ? *trace : ImportedTrace{};
}

std::string Error(const std::string& json, ImportOptions options = {}) {
  options.file = "bad.json";
  auto trace = ReadChromeTrace(json, options);
  EXPECT_FALSE(trace.ok());
  return trace.ok() ? "" : std::string(trace.status().message());
}

const ImportedSpan* Find(const ImportedTrace& t, const std::string& name) {
  for (const ImportedSpan& s : t.spans) {
    if (s.name == name) return &s;
  }
  ADD_FAILURE() << "no span " << name;
  return nullptr;
}

// The general format: both containers, every phase Meridian imports,
// string and number ids, times exact from the text.
TEST(ChromeTraceReaderTest, ReadsEveryPhaseWithExactTimes) {
  ImportOptions options;
  options.epoch_ns = kEpoch;
  const ImportedTrace t = Read(R"json([
    {"ph":"M","name":"process_name","pid":7,"args":{"name":"trainer"}},
    {"ph":"M","name":"thread_name","pid":7,"tid":"io","args":{"name":"loader"}},
    {"ph":"X","name":"forward","cat":"user","pid":7,"tid":1,"ts":10.5,"dur":2.25,
     "args":{"step":3,"note":"a","grid":[1,2],"ok":true}},
    {"ph":"B","name":"backward","pid":7,"tid":1,"ts":20,"args":{"x":1}},
    {"ph":"E","pid":7,"tid":1,"ts":25.001,"args":{"y":2.5}},
    {"ph":"i","name":"mark","pid":7,"tid":"io","ts":30,"s":"t"},
    {"ph":"C","name":"memory","pid":7,"ts":40,"args":{"used":1024,"free":3}},
    {"ph":"b","name":"fetch","cat":"io","id":"0x1","pid":7,"ts":50},
    {"ph":"e","name":"fetch","cat":"io","id":"0x1","pid":7,"ts":58},
    {"ph":"X","name":"MPI_Send","pid":7,"tid":1,"ts":60,"dur":1,"args":{"bytes":64,"peer":1,"tag":5}},
    {"ph":"P","name":"sample","pid":7,"ts":61}
  ])json",
                               options);
  EXPECT_EQ(t.format, "chrome");
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(t.processes[0].rank, 0);
  EXPECT_EQ(t.processes[0].pid, 7);
  EXPECT_EQ(t.processes[0].node, "t.json");
  ASSERT_EQ(t.spans.size(), 7u);

  const ImportedSpan* forward = Find(t, "forward");
  EXPECT_EQ(forward->start_ns, kEpoch + 10500);
  EXPECT_EQ(forward->dur_ns, 2250);
  EXPECT_EQ(forward->category, v1::CATEGORY_USER);
  EXPECT_EQ(forward->step, 3);
  ASSERT_EQ(forward->args.size(), 3u);
  EXPECT_EQ(std::get<std::string>(forward->args[0].value), "a");
  EXPECT_EQ(std::get<std::string>(forward->args[1].value), "[1,2]");
  EXPECT_EQ(std::get<int64_t>(forward->args[2].value), 1);
  EXPECT_EQ(t.tracks[forward->track].name, "thread 1");
  EXPECT_EQ(t.tracks[forward->track].id, 1);

  const ImportedSpan* backward = Find(t, "backward");
  EXPECT_EQ(backward->start_ns, kEpoch + 20000);
  EXPECT_EQ(backward->dur_ns, 5001);
  ASSERT_EQ(backward->args.size(), 2u);  // B's and E's
  EXPECT_EQ(std::get<double>(backward->args[1].value), 2.5);

  const ImportedSpan* mark = Find(t, "mark");
  EXPECT_EQ(mark->kind, v1::SPAN_KIND_INSTANT);
  EXPECT_EQ(t.tracks[mark->track].name, "loader");

  const ImportedSpan* used = Find(t, "memory used");
  EXPECT_EQ(used->kind, v1::SPAN_KIND_COUNTER);
  EXPECT_EQ(used->value, 1024);
  EXPECT_EQ(Find(t, "memory free")->value, 3);

  const ImportedSpan* fetch = Find(t, "fetch");
  EXPECT_EQ(fetch->dur_ns, 8000);
  EXPECT_EQ(t.tracks[fetch->track].kind, v1::TRACK_KIND_QUEUE);
  EXPECT_EQ(t.tracks[fetch->track].name, "io");

  const ImportedSpan* send = Find(t, "MPI_Send");
  EXPECT_EQ(send->category, v1::CATEGORY_MPI);
  EXPECT_EQ(send->bytes, 64);
  EXPECT_EQ(send->peer, 1);
  EXPECT_EQ(send->tag, 5);
  EXPECT_TRUE(send->args.empty());
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_EQ(t.notes[0], "1 events of phases not imported (\"P\" 1)");
}

TEST(ChromeTraceReaderTest, ObjectFormFlowsRanksAndEpochTimes) {
  // Absolute epoch microseconds (three decimals, beyond a double): used as
  // they are. Flows link a launch and its kernel; "rank N" names ranks.
  const ImportedTrace t = Read(R"json({"traceEvents":[
    {"ph":"M","name":"process_name","pid":1,"args":{"name":"rank 3"}},
    {"ph":"M","name":"process_name","pid":2,"args":{"name":"worker"}},
    {"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","pid":1,"tid":1,"ts":1764000000000001.001,"dur":5},
    {"ph":"s","name":"l","cat":"launch","id":9,"pid":1,"tid":1,"ts":1764000000000001.001},
    {"ph":"X","name":"k","cat":"cuda_kernel","pid":1,"tid":2,"ts":1764000000000010,"dur":3},
    {"ph":"f","bp":"e","name":"l","cat":"launch","id":9,"pid":1,"tid":2,"ts":1764000000000010},
    {"ph":"X","name":"w","pid":2,"tid":1,"ts":1764000000000020,"dur":1}
  ],"displayTimeUnit":"ns"})json");
  ASSERT_EQ(t.processes.size(), 2u);
  EXPECT_EQ(t.processes[0].rank, 3);
  EXPECT_EQ(t.processes[1].rank, 0);
  const ImportedSpan* launch = Find(t, "cudaLaunchKernel");
  const ImportedSpan* kernel = Find(t, "k");
  EXPECT_EQ(launch->start_ns, 1764000000000001001);
  EXPECT_EQ(kernel->start_ns, 1764000000000010000);
  EXPECT_NE(launch->correlation, 0u);
  EXPECT_EQ(launch->correlation, kernel->correlation);
  EXPECT_EQ(t.tracks[kernel->track].kind, v1::TRACK_KIND_GPU_STREAM);
  EXPECT_EQ(t.tracks[launch->track].kind, v1::TRACK_KIND_THREAD);
}

// Meridian's own export: a counter is {name: value} beside its fields
// (one series, its step its own), and the message arrows are not links
// (the export draws them again from the matched messages); another
// trace's two-arg counter and its flows stay as they were.
TEST(ChromeTraceReaderTest,
     MeridiansCountersAndMessageArrowsComeBackAsTheyWere) {
  const std::string events = R"json(
    {"ph":"C","cat":"user","name":"loss","pid":1,"tid":1,"ts":5,"args":{"loss":0.5,"step":3}},
    {"ph":"C","cat":"user","name":"step","pid":1,"tid":1,"ts":5,"args":{"step":5.0,"step":3}},
    {"ph":"C","name":"net","pid":1,"tid":1,"ts":6,"args":{"net":5,"comm":2}},
    {"ph":"C","name":"mem","pid":1,"tid":1,"ts":6,"args":{"mem":1,"step":2,"free":7}},
    {"ph":"X","cat":"mpi","name":"MPI_Send","pid":1,"tid":1,"ts":10,"dur":2,"args":{"peer":1,"tag":7}},
    {"ph":"s","cat":"message","name":"message","id":"1:0>1:7#0","pid":1,"tid":1,"ts":10},
    {"ph":"X","cat":"mpi","name":"MPI_Recv","pid":2,"tid":1,"ts":9,"dur":4,"args":{"peer":0,"tag":7}},
    {"ph":"f","bp":"e","cat":"message","name":"message","id":"1:0>1:7#0","pid":2,"tid":1,"ts":12.999},
    {"ph":"X","cat":"c10d","name":"allreduce","pid":1,"tid":2,"ts":20,"dur":5,"args":{"bytes":40,"seq":0}}
  )json";
  const ImportedTrace meridian =
      Read(absl::StrCat(R"json({"traceEvents":[)json", events,
                        R"json(],"otherData":{"epoch_ns":)json", kEpoch, "}}"));
  EXPECT_EQ(meridian.format, "meridian");
  const ImportedSpan* loss = Find(meridian, "loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->value, 0.5);
  EXPECT_EQ(loss->step, 3);
  auto named = [](const ImportedTrace& t, const std::string& name) {
    return std::count_if(t.spans.begin(), t.spans.end(),
                         [&](const ImportedSpan& s) { return s.name == name; });
  };
  EXPECT_EQ(named(meridian, "loss step"), 0);
  EXPECT_EQ(named(meridian, "mem free"), 1);  // not Meridian's shape
  EXPECT_EQ(named(meridian, "mem step"), 1);
  // A counter named as a field: its value is the first arg, the export's.
  const ImportedSpan* step = Find(meridian, "step");
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->value, 5.0);
  EXPECT_EQ(step->step, 3);
  // "comm" is a hex string in Meridian's exports: a number is a series.
  EXPECT_EQ(named(meridian, "net comm"), 1);
  EXPECT_EQ(Find(meridian, "MPI_Send")->correlation, 0u);
  EXPECT_EQ(Find(meridian, "MPI_Recv")->correlation, 0u);
  // torch.distributed's operations come back as such (docs/torch.md).
  EXPECT_EQ(Find(meridian, "allreduce")->category, v1::CATEGORY_C10D);
  // Without otherData.epoch_ns a trace is not Meridian's: its flows link.
  ImportOptions relative;
  relative.epoch_ns = kEpoch;
  const ImportedTrace chrome = Read(absl::StrCat("[", events, "]"), relative);
  EXPECT_NE(Find(chrome, "MPI_Send")->correlation, 0u);
  EXPECT_EQ(Find(chrome, "MPI_Send")->correlation,
            Find(chrome, "MPI_Recv")->correlation);
}

// PyTorch's profiler: one process, the rank from distributedInfo (after
// traceEvents, as Kineto's fallback writes it), times from the base, GPU
// tracks per device and stream, NCCL kernels as collectives.
TEST(ChromeTraceReaderTest, KinetoTrace) {
  const ImportedTrace t = Read(R"json({"schemaVersion":1,"deviceProperties":[],
    "baseTimeNanoseconds":1764000000000000000,"traceEvents":[
    {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":4321,"tid":4321,"ts":100.000,"dur":20.500},
    {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":4321,"tid":4321,"ts":101.000,"dur":4.000,"args":{"correlation":77,"cbid":211}},
    {"ph":"X","cat":"kernel","name":"sgemm","pid":0,"tid":7,"ts":110.000,"dur":30.000,"args":{"correlation":77,"stream":7,"device":0}},
    {"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":13,"ts":150.000,"dur":8.000,
      "args":{"correlation":80,"Collective name":"allreduce","In msg nelems":1024,"Out msg nelems":1024,"Group size":2,"dtype":"Float"}},
    {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":90,"dur":2,"args":{"bytes":4096}},
    {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":4321,"tid":4321,"ts":160,"dur":1},
    {"ph":"s","cat":"ac2g","name":"ac2g","id":77,"pid":4321,"tid":4321,"ts":101.000},
    {"ph":"f","cat":"ac2g","name":"ac2g","id":77,"pid":0,"tid":7,"ts":110.000,"bp":"e"}
  ],"distributedInfo":{"backend":"nccl","rank":5,"world_size":8},"traceName":"x"})json");
  EXPECT_EQ(t.format, "kineto");
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(t.processes[0].rank, 5);
  EXPECT_EQ(t.processes[0].pid, 4321);
  const ImportedSpan* mm = Find(t, "aten::mm");
  EXPECT_EQ(mm->start_ns, kEpoch + 100000);
  EXPECT_EQ(mm->dur_ns, 20500);
  EXPECT_EQ(mm->category, v1::CATEGORY_USER);
  const ImportedSpan* gemm = Find(t, "sgemm");
  EXPECT_EQ(gemm->category, v1::CATEGORY_CUDA_KERNEL);
  EXPECT_EQ(gemm->correlation, 77u);
  EXPECT_EQ(Find(t, "cudaLaunchKernel")->correlation, 77u);
  EXPECT_EQ(t.tracks[gemm->track].kind, v1::TRACK_KIND_GPU_STREAM);
  EXPECT_EQ(t.tracks[gemm->track].name, "GPU 0 stream 7");
  EXPECT_EQ(t.tracks[gemm->track].id, 7);
  const ImportedSpan* nccl = Find(t, "allreduce");
  EXPECT_EQ(nccl->category, v1::CATEGORY_NCCL);
  EXPECT_EQ(nccl->bytes, 4096);
  EXPECT_EQ(t.tracks[nccl->track].name, "GPU 0 stream 13");
  EXPECT_EQ(Find(t, "Memcpy HtoD (Pageable -> Device)")->category,
            v1::CATEGORY_CUDA_MEMCPY);
  EXPECT_EQ(Find(t, "Memcpy HtoD (Pageable -> Device)")->bytes, 4096);
  EXPECT_EQ(Find(t, "cudaStreamSynchronize")->category, v1::CATEGORY_CUDA_SYNC);
}

TEST(ChromeTraceReaderTest, UnclosedArraysDuplicatesAndRelativeTimes) {
  ImportOptions options;
  options.fallback_end_ns = kEpoch + 1000000;
  options.rank = 4;
  options.node = "n1";
  // An array never closed, with a trailing comma (Horovod up to 0.20.0);
  // one event twice.
  const ImportedTrace t = Read(R"json([
    {"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","name":"b","pid":1,"tid":1,"ts":200,"dur":800},
  )json",
                               options);
  ASSERT_EQ(t.spans.size(), 2u);
  EXPECT_EQ(t.processes[0].rank, 4);
  EXPECT_EQ(t.processes[0].node, "n1");
  // Ends at the file's time: b ends at 1000 us.
  EXPECT_EQ(Find(t, "a")->start_ns, kEpoch);
  EXPECT_EQ(Find(t, "b")->start_ns, kEpoch + 200000);
  ASSERT_EQ(t.notes.size(), 2u);
  EXPECT_EQ(t.notes[0],
            "times are relative and the file gives no epoch: placed to end at "
            "the file's modification time (ts 0 = 1764000000000000000 ns "
            "since the Unix epoch; --epoch-ns sets it)");
  EXPECT_EQ(t.notes[1],
            "1 duplicated events (the same event twice) imported once");
}

TEST(ChromeTraceReaderTest, ErrorsNameTheFileTheEventAndTheField) {
  ImportOptions epoch;
  epoch.epoch_ns = kEpoch;
  EXPECT_EQ(Error(R"json([{"ph":"X","name":"a","ts":1}])json", epoch),
            "bad.json: event 0 (\"a\"): an \"X\" event without \"dur\"");
  EXPECT_EQ(Error(R"json([{"ph":"X","name":"a","ts":1,"dur":1},
                      {"ph":"X","name":"b","ts":"soon","dur":1}])json",
                  epoch),
            "bad.json: event 1 (\"b\"): field \"ts\": soon is not a number of "
            "microseconds that fits");
  EXPECT_EQ(Error(R"json([{"ph":"X","name":"a","ts":1,"dur":-1}])json", epoch),
            "bad.json: event 0 (\"a\"): field \"dur\" is negative (-1000 ns)");
  EXPECT_EQ(Error(R"json([{"name":"a","ts":1}])json", epoch),
            "bad.json: event 0 (\"a\"): no field \"ph\"");
  EXPECT_EQ(Error(R"json([{"ph":"E","ts":1,"pid":1}])json", epoch),
            "bad.json: event 0: an \"E\" event with no open \"B\" on its "
            "thread");
  EXPECT_EQ(Error(R"json([{"ph":"X","name":"a","ts":1,"dur":1,"pid":[1]}])json",
                  epoch),
            "bad.json: event 0 (\"a\"): field \"pid\" is neither a number nor "
            "a string");
  EXPECT_EQ(Error(R"json([1])json", epoch), "bad.json: event 0: not an object");
  // Absurd: year 1970 + 1 us, with the trace's own epoch of 0.
  EXPECT_EQ(Error(R"json([{"ph":"X","name":"a","ts":1,"dur":1}])json"),
            "bad.json: event 0 (\"a\"): field \"ts\": 1000 ns + epoch 0 is "
            "not a time between 2000 and 2100 (an absurd timestamp, or a "
            "relative trace: --epoch-ns)");
  // A negative epoch with the largest "ts" (found by fuzzing: the check
  // itself overflowed).
  ImportOptions negative;
  negative.epoch_ns = -764000000000000000;
  EXPECT_EQ(Error(R"json([{"ph":"X","name":"a","ts":0.001,"dur":1},
                      {"ph":"X","name":"b","ts":9223372036854775,"dur":1}])json",
                  negative),
            "bad.json: event 0 (\"a\"): field \"ts\": 1 ns + epoch "
            "-764000000000000000 is not a time between 2000 and 2100 (an "
            "absurd timestamp, or a relative trace: --epoch-ns)");
  EXPECT_EQ(Error(R"json({"traceEvents":[{"ph":"X","name":"a","ts":1,"dur":1}],
                      "baseTimeNanoseconds":99999999999999999999})json"),
            "bad.json: \"baseTimeNanoseconds\" is not an integer");
  EXPECT_EQ(Error(R"json({"events":[]})json"),
            "bad.json: not a Chrome trace: an object without \"traceEvents\"");
  EXPECT_EQ(Error("\"text\""),
            "bad.json: not a Chrome trace: the top level is neither an array "
            "of events nor an object with \"traceEvents\"");
  // Broken JSON: the line and column.
  EXPECT_EQ(
      Error("[{\"ph\":\"X\",\n \"ts\": 1,\n \"dur\": }]", epoch).substr(0, 26),
      "bad.json: line 3 column 9:");
  // Cut short (a truncated download): nothing imported.
  const std::string cut =
      Error("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":1}", epoch);
  EXPECT_EQ(cut.substr(0, 38), "bad.json: line 1 column 42: not valid ") << cut;
  EXPECT_TRUE(absl::EndsWith(cut, "in event 1; nothing imported")) << cut;
}

}  // namespace
}  // namespace meridian
