#include "import/horovod_timeline_reader.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "testing/file_text.h"

namespace meridian {
namespace {

constexpr int64_t kEpoch = 1764000000000000000;  // 2025-11-24 16:00:00 UTC
constexpr int64_t kUs = 1000;

ImportedTrace Read(const std::string& json, ImportOptions options = {}) {
  if (options.file.empty()) options.file = "timeline.json";
  auto trace = ReadHorovodTimeline(json, options);
  EXPECT_TRUE(trace.ok()) << trace.status();
  return trace.ok() ? *trace : ImportedTrace{};
}

std::string Error(const std::string& json, ImportOptions options = {}) {
  options.file = "bad.json";
  auto trace = ReadHorovodTimeline(json, options);
  EXPECT_FALSE(trace.ok());
  return trace.ok() ? "" : std::string(trace.status().message());
}

// The span named `name` on the track named `track`.
const ImportedSpan& Find(const ImportedTrace& t, const std::string& name,
                         const std::string& track) {
  for (const ImportedSpan& s : t.spans) {
    if (s.name == name && t.tracks[s.track].name == track) return s;
  }
  ADD_FAILURE() << "no span " << name << " on " << track;
  static const ImportedSpan kNone;
  return kNone;
}

const ImportedArg* Arg(const ImportedSpan& s, const std::string& key) {
  for (const ImportedArg& a : s.args) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

constexpr char kGrad[] = "DistributedSGD_Allreduce/grad_0";
constexpr char kEmbedding[] = "DistributedSGD_Allgather/embedding";

// Horovod 0.20.1 and later: closed, with the epoch header.
TEST(HorovodTimelineReaderTest, ReadsClosedTimelineWithEpochHeader) {
  ImportOptions options;
  options.file = "import/testdata/horovod_timeline.json";
  options.epoch_ns = 5;  // the file's own epoch wins
  const ImportedTrace t = Read(FileText(options.file), options);
  EXPECT_EQ(t.format, "horovod");
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(t.processes[0].rank, 0);
  EXPECT_EQ(t.processes[0].node, "horovod_timeline.json");
  EXPECT_TRUE(t.notes.empty()) << t.notes[0];

  ASSERT_EQ(t.tracks.size(), 3u);
  EXPECT_EQ(t.tracks[0].name, kGrad);
  EXPECT_EQ(t.tracks[0].kind, v1::TRACK_KIND_QUEUE);
  EXPECT_EQ(t.tracks[0].id, 1);
  EXPECT_EQ(t.tracks[1].name, kEmbedding);
  EXPECT_EQ(t.tracks[1].kind, v1::TRACK_KIND_QUEUE);
  EXPECT_EQ(t.tracks[1].id, 2);
  EXPECT_EQ(t.tracks[2].name, "Horovod background thread");
  EXPECT_EQ(t.tracks[2].kind, v1::TRACK_KIND_THREAD);
  ASSERT_EQ(t.spans.size(), 15u);

  const ImportedSpan& negotiate = Find(t, "NEGOTIATE_ALLREDUCE", kGrad);
  EXPECT_EQ(negotiate.category, v1::CATEGORY_USER);
  EXPECT_EQ(negotiate.kind, v1::SPAN_KIND_COMPLETE);
  EXPECT_EQ(negotiate.start_ns, kEpoch + 1000 * kUs);
  EXPECT_EQ(negotiate.dur_ns, 250 * kUs);
  EXPECT_EQ(negotiate.bytes, 0);

  // Rank 1 was ready first.
  const ImportedSpan& late = Find(t, "rank 0 ready", kGrad);
  EXPECT_EQ(late.kind, v1::SPAN_KIND_INSTANT);
  EXPECT_EQ(late.category, v1::CATEGORY_USER);
  EXPECT_EQ(late.start_ns, kEpoch + 1250 * kUs);
  EXPECT_EQ(late.dur_ns, 0);
  ASSERT_NE(Arg(late, "rank"), nullptr);
  EXPECT_EQ(std::get<int64_t>(Arg(late, "rank")->value), 0);
  EXPECT_EQ(Find(t, "rank 1 ready", kGrad).start_ns, kEpoch + 1000 * kUs);
  EXPECT_EQ(Find(t, "rank 1 ready", kEmbedding).start_ns, kEpoch + 1330 * kUs);

  // The response, its phases, and its collective with the tensor's bytes:
  // 256 x 1024 float32.
  const ImportedSpan& allreduce = Find(t, "ALLREDUCE", kGrad);
  EXPECT_EQ(allreduce.category, v1::CATEGORY_USER);
  EXPECT_EQ(allreduce.start_ns, kEpoch + 1300 * kUs);
  EXPECT_EQ(allreduce.dur_ns, 120 * kUs);
  EXPECT_EQ(allreduce.bytes, 1048576);
  ASSERT_NE(Arg(allreduce, "dtype"), nullptr);
  EXPECT_EQ(std::get<std::string>(Arg(allreduce, "dtype")->value),
            "HOROVOD_FLOAT32");
  EXPECT_EQ(std::get<std::string>(Arg(allreduce, "shape")->value),
            "[256, 1024]");
  const ImportedSpan& nccl = Find(t, "ncclAllReduce", kGrad);
  EXPECT_EQ(nccl.category, v1::CATEGORY_NCCL);
  EXPECT_EQ(nccl.start_ns, kEpoch + 1340 * kUs);
  EXPECT_EQ(nccl.dur_ns, 60 * kUs);
  EXPECT_EQ(nccl.bytes, 1048576);
  ASSERT_NE(Arg(nccl, "timeline_name"), nullptr);
  EXPECT_EQ(std::get<std::string>(Arg(nccl, "timeline_name")->value),
            "NCCL_ALLREDUCE");
  for (const char* phase : {"WAIT_FOR_DATA", "QUEUE", "MEMCPY_IN_FUSION_BUFFER",
                            "MEMCPY_OUT_FUSION_BUFFER"}) {
    const ImportedSpan& s = Find(t, phase, kGrad);
    EXPECT_EQ(s.category, v1::CATEGORY_USER) << phase;
    EXPECT_EQ(s.bytes, 0) << phase;
  }
  EXPECT_EQ(Find(t, "WAIT_FOR_DATA", kGrad).dur_ns, 10 * kUs);
  EXPECT_EQ(Find(t, "MEMCPY_IN_FUSION_BUFFER", kGrad).start_ns,
            kEpoch + 1320 * kUs);

  // Another tensor's response, interleaved: 10 float16.
  const ImportedSpan& mpi = Find(t, "MPI_Allgather", kEmbedding);
  EXPECT_EQ(mpi.category, v1::CATEGORY_MPI);
  EXPECT_EQ(mpi.start_ns, kEpoch + 1510 * kUs);
  EXPECT_EQ(mpi.dur_ns, 90 * kUs);
  EXPECT_EQ(mpi.bytes, 20);
  EXPECT_EQ(Find(t, "ALLGATHER", kEmbedding).bytes, 20);
  EXPECT_EQ(Find(t, "NEGOTIATE_ALLGATHER", kEmbedding).dur_ns, 15 * kUs);

  const ImportedSpan& cycle =
      Find(t, "CYCLE_START", "Horovod background thread");
  EXPECT_EQ(cycle.kind, v1::SPAN_KIND_INSTANT);
  EXPECT_EQ(cycle.start_ns, kEpoch + 1500 * kUs);
}

// Up to Horovod 0.20.0: never closed, no epoch header.
TEST(HorovodTimelineReaderTest, ReadsUnclosedTimelineWithEpochOption) {
  ImportOptions options;
  options.file = "import/testdata/horovod_timeline_unclosed.json";
  options.epoch_ns = kEpoch;
  options.rank = 4;
  options.node = "host-a";
  const ImportedTrace t = Read(FileText(options.file), options);
  EXPECT_EQ(t.processes[0].rank, 4);
  EXPECT_EQ(t.processes[0].node, "host-a");
  ASSERT_EQ(t.tracks.size(), 1u);
  EXPECT_EQ(t.tracks[0].name, "grad_0");
  // The last negotiation was still open when the file ends.
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_TRUE(absl::StrContains(t.notes[0], "1 \"B\" events without"));
  ASSERT_EQ(t.spans.size(), 6u);
  const ImportedSpan& mpi = Find(t, "MPI_Allreduce", "grad_0");
  EXPECT_EQ(mpi.category, v1::CATEGORY_MPI);
  EXPECT_EQ(mpi.start_ns, kEpoch + 12 * kUs);
  EXPECT_EQ(mpi.dur_ns, 8 * kUs);
  EXPECT_EQ(mpi.bytes, 96);  // 3 x 4 float64
  EXPECT_EQ(Find(t, "ALLREDUCE", "grad_0").dur_ns, 11 * kUs);
  // The tick inside the open negotiation still counts.
  int ticks = 0;
  for (const ImportedSpan& s : t.spans) {
    if (s.name == "rank 1 ready") ++ticks;
  }
  EXPECT_EQ(ticks, 2);
}

TEST(HorovodTimelineReaderTest, RelativeTimesEndAtTheFallback) {
  ImportOptions options;
  options.fallback_end_ns = kEpoch;
  const ImportedTrace t =
      Read(FileText("import/testdata/horovod_timeline_unclosed.json"), options);
  // The latest time is the tick at 31 µs.
  int64_t last = 0;
  for (const ImportedSpan& s : t.spans) {
    last = std::max(last, s.start_ns + s.dur_ns);
  }
  EXPECT_EQ(last, kEpoch);
  EXPECT_EQ(Find(t, "NEGOTIATE_ALLREDUCE", "grad_0").start_ns,
            kEpoch - 26 * kUs);
  bool placed = false;
  for (const std::string& note : t.notes) {
    placed |= absl::StrContains(note, "modification time");
  }
  EXPECT_TRUE(placed);
}

TEST(HorovodTimelineReaderTest, RelativeTimesWithoutAnEpochAreRefused) {
  const std::string error =
      Error(FileText("import/testdata/horovod_timeline_unclosed.json"));
  EXPECT_TRUE(absl::StrContains(error, "bad.json: event 3 (line 5, ")) << error;
  EXPECT_TRUE(absl::StrContains(error, "not a time between 2000 and 2100"))
      << error;
  EXPECT_TRUE(absl::StrContains(error, "--epoch-ns")) << error;
}

// Horovod does not escape tensor names.
TEST(HorovodTimelineReaderTest, ReadsTensorNamesWrittenUnescaped) {
  const ImportedTrace t = Read(
      "[\n"
      R"json({"name": "process_name", "ph": "M", "pid": 0, "args": {"start_time_since_epoch_in_micros":1764000000000000}},
{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "say "hi" \ bye"}},
{"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "a\"b"}},
{"ph": "B", "name": "NEGOTIATE_BROADCAST", "ts": 1, "pid": 1},
{"ph": "E", "ts": 2, "pid": 1},
{"ph": "B", "name": "NEGOTIATE_BROADCAST", "ts": 1, "pid": 2},
{"ph": "E", "ts": 2, "pid": 2},
)json");
  ASSERT_EQ(t.tracks.size(), 2u);
  EXPECT_EQ(t.tracks[0].name, R"(say "hi" \ bye)");
  EXPECT_EQ(t.tracks[1].name, R"(a"b)");  // valid JSON already: read as JSON
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_TRUE(absl::StrContains(t.notes[0], "1 tensor names")) << t.notes[0];
}

TEST(HorovodTimelineReaderTest, NamesThatCannotBeToldApartAreAnError) {
  const std::string error = Error(
      "[\n"
      R"json({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "x"}},{"y"}},
{"ph": "B", "name": "NEGOTIATE_BROADCAST", "ts": 1, "pid": 1}]
)json");
  EXPECT_TRUE(absl::StrContains(error, "bad.json: line 2")) << error;
  EXPECT_TRUE(absl::StrContains(error, "not valid JSON")) << error;
  EXPECT_TRUE(absl::StrContains(error, "tensor names unescaped")) << error;
}

TEST(HorovodTimelineReaderTest, RefusesBrokenFiles) {
  const std::string head =
      "[\n"
      R"json({"name": "process_name", "ph": "M", "pid": 0, "args": {"start_time_since_epoch_in_micros":1764000000000000}},
{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "g"}},
)json";
  struct Case {
    std::string events;
    std::string expected;
  };
  const Case cases[] = {
      // Truncated in the middle of a record.
      {R"json({"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": 1, "pid": 1},
{"ph": "E", "ts)json",
       "bad.json: line 5 column 13: not valid JSON (A string is opened, but "
       "never closed.); nothing imported"},
      // Unbalanced.
      {R"json({"ph": "B", "name": "ALLREDUCE", "ts": 1, "pid": 1},
{"ph": "E", "ts": 2, "pid": 1},
{"ph": "E", "ts": 3, "pid": 1},)json",
       "bad.json: event 4 (line 6): an \"E\" event with no open \"B\" on pid "
       "1"},
      {R"json({"ph": "B", "name": "ALLREDUCE", "ts": 5, "pid": 1},
{"ph": "E", "ts": 3, "pid": 1},)json",
       "event 3 (line 5): field \"ts\": ends before its \"B\" (event 2)"},
      {R"json({"ph": "B", "name": "ALLREDUCE", "ts": "soon", "pid": 1},)json",
       "event 2 (line 4, \"ALLREDUCE\"): field \"ts\": soon is not a number "
       "of microseconds"},
      {R"json({"ph": "B", "name": "ALLREDUCE", "ts": [1], "pid": 1},)json",
       "field \"ts\" is not a number"},
      {R"json({"ph": "B", "name": "ALLREDUCE", "pid": 1},)json",
       "event 2 (line 4, \"ALLREDUCE\"): no field \"ts\""},
      {R"json({"ph": "B", "name": "ALLREDUCE", "ts": 1},)json",
       "no field \"pid\""},
      {R"json({"ph": "B", "name": "ALLREDUCE", "ts": 1, "pid": "Comm.x"},)json",
       "field \"pid\" is not a tensor index"},
      {R"json({"ph": "X", "name": "0", "ts": 1, "pid": 1},)json",
       "an \"X\" event without \"dur\""},
      {R"json({"name": "ALLREDUCE", "ts": 1, "pid": 1},)json",
       "no field \"ph\""},
      {R"json(7,)json", "event 2 (line 4): not an object"},
      // Absurd: after 2100 from the epoch header.
      {R"json({"ph": "B", "name": "ALLREDUCE", "ts": 4000000000000000, "pid": 1},
{"ph": "E", "ts": 4000000000000001, "pid": 1},)json",
       "event 2 (line 4, \"ALLREDUCE\"): field \"ts\": 4000000000000000000 ns "
       "+ epoch 1764000000000000000 ns is not a time between 2000 and 2100"},
      {R"json({"ph": "B", "name": "ALLREDUCE", "ts": 1, "pid": 1},
{"ph": "E", "ts": 9000000000000, "pid": 1},)json",
       "more than 30 days after its \"B\""},
      {R"json({"ph": "B", "name": "ALLREDUCE", "ts": 1e30, "pid": 1},)json",
       "1e30 is not a number of microseconds that fits"},
  };
  for (const Case& c : cases) {
    const std::string error = Error(head + c.events);
    EXPECT_TRUE(absl::StrContains(error, c.expected))
        << c.events << "\n  gave: " << error << "\n  expected: " << c.expected;
  }
  EXPECT_TRUE(absl::StrContains(
      Error(
          R"json([{"name": "process_name", "ph": "M", "pid": 0, "args": {"start_time_since_epoch_in_micros": 12}}])json"),
      "args.start_time_since_epoch_in_micros is not an integer number of "
      "microseconds between 2000 and 2100"));
}

TEST(HorovodTimelineReaderTest, RefusesOtherFormats) {
  // A BytePS comm.json: string pids.
  const std::string byteps = Error(
      R"json({"traceEvents": [{"ph": "X", "pid": "Comm.w", "name": "Comm.w",
"ts": 1764000000000000, "dur": 3, "tid": "total"}], "displayTimeUnit": "ms"})json");
  EXPECT_TRUE(absl::StrContains(byteps, "field \"pid\" is not a tensor index"))
      << byteps;
  EXPECT_TRUE(
      absl::StrContains(Error("{\"a\": 1}"), "without \"traceEvents\""));
  EXPECT_TRUE(absl::StrContains(Error("\"x\""), "neither an array"));
  EXPECT_TRUE(absl::StrContains(Error(""), "not valid JSON"));
}

TEST(HorovodTimelineReaderTest, EmptyTimelineHasNoSpans) {
  const ImportedTrace t = Read("[\n");
  EXPECT_TRUE(t.spans.empty());
  EXPECT_EQ(t.processes.size(), 1u);
}

TEST(HorovodTimelineReaderTest, OtherPhasesAreCountedAndSkipped) {
  const ImportedTrace t = Read(
      R"json([{"ph": "C", "name": "c", "ts": 1, "pid": 1, "args": {"x": 1}},
{"ph": "X", "name": "CUSTOM", "ts": 2, "dur": 3, "pid": 1}])json",
      {"t.json", "", -1, kEpoch, 0});
  ASSERT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(t.spans[0].name, "CUSTOM");
  EXPECT_EQ(t.spans[0].dur_ns, 3 * kUs);
  EXPECT_EQ(t.tracks[0].name, "tensor 1");
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_EQ(t.notes[0], "1 events of phases not imported (\"C\" 1)");
}

// Deep nesting, each level ending with a dtype: every span gets its bytes
// once (quadratic, this would take minutes).
TEST(HorovodTimelineReaderTest, DeepNestingStaysLinear) {
  constexpr int kDepth = 100000;
  std::string json = "[\n";
  for (int i = 0; i < kDepth; ++i) {
    json += R"({"ph": "B", "name": "MPI_ALLREDUCE", "ts": 1, "pid": 1},)";
    json += "\n";
  }
  for (int i = 0; i < kDepth; ++i) {
    json +=
        R"({"ph": "E", "ts": 2, "pid": 1, "args": {"dtype": "HOROVOD_INT8", "shape": "[3]"}},)";
    json += "\n";
  }
  const ImportedTrace t = Read(json, {"t.json", "", -1, kEpoch, 0});
  ASSERT_EQ(t.spans.size(), static_cast<size_t>(kDepth));
  for (const ImportedSpan& s : t.spans) ASSERT_EQ(s.bytes, 3);
}

TEST(HorovodTimelineReaderTest, TensorBytes) {
  EXPECT_EQ(HorovodTensorBytes("HOROVOD_FLOAT32", "[2, 3]"), 24);
  EXPECT_EQ(HorovodTensorBytes("float16", "[2,3]"), 12);
  EXPECT_EQ(HorovodTensorBytes("HOROVOD_INT64", "[]"), 8);
  EXPECT_EQ(HorovodTensorBytes("HOROVOD_BOOL", "[0, 7]"), 0);
  EXPECT_EQ(HorovodTensorBytes("HOROVOD_BFLOAT16", " [5] "), 10);
  EXPECT_EQ(HorovodTensorBytes("HOROVOD_QUATERNION", "[2]"), 0);
  EXPECT_EQ(HorovodTensorBytes("HOROVOD_FLOAT32", "2, 3"), 0);
  EXPECT_EQ(HorovodTensorBytes("HOROVOD_FLOAT32", "[2, -3]"), 0);
  EXPECT_EQ(HorovodTensorBytes("HOROVOD_FLOAT32", "[2, x]"), 0);
  EXPECT_EQ(HorovodTensorBytes("HOROVOD_FLOAT64",
                               "[4294967296, 4294967296, 4294967296]"),
            0);
}

}  // namespace
}  // namespace meridian
