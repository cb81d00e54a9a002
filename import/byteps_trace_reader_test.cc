#include "import/byteps_trace_reader.h"

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
constexpr char kRoot[] = "import/testdata/byteps/0/comm.json";

ImportedTrace Read(const std::string& json, ImportOptions options = {}) {
  if (options.file.empty()) options.file = "comm.json";
  auto trace = ReadBytePSTrace(json, options);
  EXPECT_TRUE(trace.ok()) << trace.status();
  return trace.ok() ? *trace : ImportedTrace{};
}

std::string Error(const std::string& json, ImportOptions options = {}) {
  options.file = "bad.json";
  auto trace = ReadBytePSTrace(json, options);
  EXPECT_FALSE(trace.ok());
  return trace.ok() ? "" : std::string(trace.status().message());
}

// One event of tensor "w" in the object form.
std::string Event(const std::string& fields) {
  return R"json({"traceEvents": [
{"ph": "X", "pid": "Comm.w", "name": "Comm.w", "ts": 1764000000000000, "dur": 5, "tid": "total"},
{)json" + fields +
         "}\n], \"displayTimeUnit\": \"ms\"}";
}

// The root GPU's trace (it shows PUSH and PULL), as BytePS writes it.
TEST(BytePSTraceReaderTest, ReadsRootGpuTrace) {
  ImportOptions options;
  options.file = kRoot;
  const ImportedTrace t = Read(FileText(kRoot), options);
  EXPECT_EQ(t.format, "byteps");
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(t.processes[0].local_rank, 0);
  EXPECT_EQ(t.processes[0].rank, -1);
  EXPECT_EQ(t.processes[0].node, "import/testdata/byteps");
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_TRUE(absl::StrContains(t.notes[0], "--rank sets it")) << t.notes[0];

  ASSERT_EQ(t.tracks.size(), 4u);
  const char* const names[] = {
      "byteps.gradient_0", "byteps.gradient_0 partition 0",
      "byteps.gradient_0 partition 1", "byteps.gradient_1"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(t.tracks[i].name, names[i]);
    EXPECT_EQ(t.tracks[i].kind, v1::TRACK_KIND_QUEUE);
    EXPECT_EQ(t.tracks[i].id, i);
    EXPECT_EQ(t.tracks[i].process, 0);
  }

  struct Expected {
    const char* name;
    v1::Category category;
    int track;
    int64_t start_us;  // after the epoch
    int64_t dur_ns;
    int32_t partition;  // -1: none
  };
  const Expected expected[] = {
      {"Comm", v1::CATEGORY_USER, 0, 0, 24026 * kUs, -1},
      {"REDUCE", v1::CATEGORY_NCCL, 1, 100, 1000 * kUs, 0},
      {"COPYD2H", v1::CATEGORY_USER, 1, 1100, 500 * kUs, 0},
      {"PUSH", v1::CATEGORY_MPI, 1, 1600, 8000 * kUs, 0},
      {"PULL", v1::CATEGORY_MPI, 1, 9600, 9000 * kUs, 0},
      {"BROADCAST", v1::CATEGORY_NCCL, 1, 18600, 1074 * kUs, 0},
      {"PUSH", v1::CATEGORY_MPI, 2, 1700, 7000 * kUs, 1},
      {"Comm", v1::CATEGORY_USER, 3, 30000, 5000500, -1},
  };
  ASSERT_EQ(t.spans.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    const ImportedSpan& s = t.spans[i];
    const Expected& e = expected[i];
    EXPECT_EQ(s.name, e.name) << i;
    EXPECT_EQ(s.category, e.category) << i;
    EXPECT_EQ(s.kind, v1::SPAN_KIND_COMPLETE) << i;
    EXPECT_EQ(s.track, e.track) << i;
    EXPECT_EQ(s.start_ns, kEpoch + e.start_us * kUs) << i;
    EXPECT_EQ(s.dur_ns, e.dur_ns) << i;
    EXPECT_EQ(s.bytes, 0) << i;
    EXPECT_EQ(s.event, i);
    if (e.partition < 0) {
      EXPECT_FALSE(s.partition.has_value()) << i;
      EXPECT_TRUE(s.args.empty()) << i;
    } else {
      EXPECT_EQ(s.partition, e.partition) << i;
      ASSERT_EQ(s.args.size(), 1u);
      EXPECT_EQ(s.args[0].key, "partition_key");
      EXPECT_EQ(std::get<int64_t>(s.args[0].value),
                (int64_t{399} << 16) + e.partition);
    }
  }
}

TEST(BytePSTraceReaderTest, RankNodeAndLocalRank) {
  ImportOptions options;
  options.file = "import/testdata/byteps/3/comm.json";
  options.rank = 7;
  options.node = "worker-1";
  const ImportedTrace t = Read(FileText(options.file), options);
  EXPECT_EQ(t.processes[0].rank, 7);
  EXPECT_EQ(t.processes[0].local_rank, 3);
  EXPECT_EQ(t.processes[0].node, "worker-1");
  EXPECT_TRUE(t.notes.empty());
  ASSERT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(t.spans[0].name, "COORDINATE_REDUCE");
  EXPECT_EQ(t.spans[0].category, v1::CATEGORY_USER);
  EXPECT_EQ(t.spans[0].partition, 0);
  EXPECT_EQ(t.tracks[0].name, "w partition 0");

  // Not in a numbered directory: the path is the node.
  const ImportedTrace u =
      Read(FileText(options.file), {"/tmp/comm.json", "", -1, {}, 0});
  EXPECT_EQ(u.processes[0].local_rank, -1);
  EXPECT_EQ(u.processes[0].node, "/tmp/comm.json");
}

TEST(BytePSTraceReaderTest, ParsesPaths) {
  BytePSPath p = ParseBytePSPath("/data/run1/traces/12/comm.json");
  EXPECT_EQ(p.local_rank, 12);
  EXPECT_EQ(p.trace_dir, "/data/run1/traces");
  p = ParseBytePSPath("2/comm.json");
  EXPECT_EQ(p.local_rank, 2);
  EXPECT_EQ(p.trace_dir, ".");
  p = ParseBytePSPath("/2/comm.json");
  EXPECT_EQ(p.local_rank, 2);
  EXPECT_EQ(p.trace_dir, "/");
  for (const char* path : {"comm.json", "/t/x2/comm.json", "/t/-1/comm.json",
                           "/t/99999999999/comm.json", "/comm.json"}) {
    p = ParseBytePSPath(path);
    EXPECT_EQ(p.local_rank, -1) << path;
    EXPECT_EQ(p.trace_dir, "") << path;
  }
}

TEST(BytePSTraceReaderTest, NumericTidsAndRelativeTimes) {
  ImportOptions options;
  options.epoch_ns = kEpoch;
  const ImportedTrace t = Read(
      R"json({"traceEvents": [
{"ph": "X", "pid": "Comm.a.b", "name": "Comm.a.b.PULL", "ts": 10, "dur": 2.5, "tid": 65538},
{"ph": "M", "pid": "Comm.a.b", "name": "process_name", "args": {"name": "x"}}
]})json",
      options);
  ASSERT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(t.spans[0].start_ns, kEpoch + 10 * kUs);
  EXPECT_EQ(t.spans[0].dur_ns, 2500);
  EXPECT_EQ(t.spans[0].partition, 2);
  EXPECT_EQ(t.tracks[0].name, "a.b partition 2");
  EXPECT_EQ(t.notes.back(), "1 events of phases not imported (\"M\" 1)");
}

TEST(BytePSTraceReaderTest, RefusesBrokenFiles) {
  struct Case {
    std::string json;
    std::string expected;
  };
  const Case cases[] = {
      {Event(
           R"json("ph": "X", "pid": "Comm.w", "name": "Comm.w.PUSH", "ts": 1764000000000000, "dur": 5, "tid": "lane")json"),
       "bad.json: event 1 (line 3, \"Comm.w.PUSH\"): field \"tid\" is neither "
       "\"total\" nor a partition key"},
      {Event(
           R"json("ph": "X", "pid": "Comm.w", "name": "Comm.w.PUSH", "ts": 1764000000000000, "dur": 5)json"),
       "event 1 (line 3, \"Comm.w.PUSH\"): no field \"tid\""},
      {Event(
           R"json("ph": "X", "pid": "Comm.w", "name": "Comm.v.PUSH", "ts": 1764000000000000, "dur": 5, "tid": "total")json"),
       "field \"name\" is neither its tensor's (\"Comm.w\")"},
      {Event(
           R"json("ph": "X", "pid": 3, "name": "Comm.w.PUSH", "ts": 1764000000000000, "dur": 5, "tid": "total")json"),
       "field \"pid\" is not a BytePS tensor"},
      {Event(
           R"json("ph": "X", "pid": "Comm.w", "name": "Comm.w.PUSH", "ts": 1764000000000000, "tid": "1")json"),
       "no field \"dur\""},
      {Event(
           R"json("ph": "X", "pid": "Comm.w", "name": "Comm.w.PUSH", "dur": 1, "tid": "1")json"),
       "no field \"ts\""},
      {Event(
           R"json("ph": "X", "pid": "Comm.w", "name": "Comm.w.PUSH", "ts": 1764000000000000, "dur": -1, "tid": "1")json"),
       "field \"dur\": -1000 ns is not between 0 and 30 days"},
      {Event(
           R"json("ph": "X", "pid": "Comm.w", "name": "Comm.w.PUSH", "ts": "x1", "dur": 1, "tid": "1")json"),
       "field \"ts\": x1 is not a number of microseconds"},
      // Absurd: after 2100.
      {Event(
           R"json("ph": "X", "pid": "Comm.w", "name": "Comm.w.PUSH", "ts": 5000000000000000, "dur": 1, "tid": "1")json"),
       "event 1 (line 3, \"PUSH\"): field \"ts\": 5000000000000000000 ns + "
       "epoch 0 ns is not a time between 2000 and 2100"},
      // Truncated.
      {R"json({"traceEvents": [
{"ph": "X", "pid": "Comm.w", "name": "Comm.w", "ts": 1764000000000000, "dur": 5, "tid": "total"},
{"ph": "X", "pid": "Comm.w", "name": "Comm.w.PUSH", "ts": 176)json",
       "bad.json: line 3 column 61: not valid JSON"},
      {R"json({"traceEvents": {}})json", "\"traceEvents\" is not an array"},
      // A Horovod timeline.
      {R"json([{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "g"}},
{"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": 1, "pid": 1},)json",
       "bad.json: event 0 (line 1, \"process_name\"): field \"pid\" is not "
       "a BytePS tensor"},
      {R"json([{"ph": "X", "name": "0", "ts": 1, "pid": 1, "dur": 0}])json",
       "bad.json: event 0 (line 1, \"0\"): field \"pid\" is not a BytePS "
       "tensor (\"Comm.<tensor>\"): not a BytePS comm.json?"},
  };
  for (const Case& c : cases) {
    auto trace = ReadBytePSTrace(c.json, {"bad.json", "", -1, {}, 0});
    const std::string error = trace.ok()
                                  ? trace->notes.back()
                                  : std::string(trace.status().message());
    EXPECT_TRUE(absl::StrContains(error, c.expected))
        << c.json << "\n  gave: " << error << "\n  expected: " << c.expected;
  }
}

// Times that are not absolute, with nothing to place them by.
TEST(BytePSTraceReaderTest, RelativeTimesWithoutAnEpochAreRefused) {
  const std::string error = Error(Event(
      R"json("ph": "X", "pid": "Comm.w", "name": "Comm.w.PUSH", "ts": 1, "dur": 1, "tid": "1")json"));
  EXPECT_TRUE(absl::StrContains(error, "event 1 (line 3, \"PUSH\")")) << error;
  EXPECT_TRUE(absl::StrContains(error, "--epoch-ns")) << error;
}

}  // namespace
}  // namespace meridian
