#include "import/bluefog_timeline_reader.h"

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
constexpr int64_t kHour = 3600000000 * kUs;  // ts 3600000000: boot + 1 h
constexpr char kFile[] = "import/testdata/bluefog/tl1.json";

ImportedTrace Read(const std::string& json, ImportOptions options) {
  auto trace = ReadBluefogTimeline(json, options);
  EXPECT_TRUE(trace.ok()) << trace.status();
  return trace.ok() ? *trace : ImportedTrace{};
}

std::string Error(const std::string& json, ImportOptions options = {}) {
  options.file = "bad.json";
  auto trace = ReadBluefogTimeline(json, options);
  EXPECT_FALSE(trace.ok());
  return trace.ok() ? "" : std::string(trace.status().message());
}

TEST(BluefogTimelineReaderTest, ReadsAgentTimeline) {
  ImportOptions options;
  options.file = kFile;
  options.epoch_ns = kEpoch;
  const ImportedTrace t = Read(FileText(kFile), options);
  EXPECT_EQ(t.format, "bluefog");
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(t.processes[0].rank, 1);  // tl1.json
  EXPECT_EQ(t.processes[0].node, "tl1.json");
  // The last enqueue had not ended when the file was read.
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_TRUE(absl::StrContains(t.notes[0], "1 \"B\" events without"))
      << t.notes[0];

  const char* const tracks[] = {"fc.weight (thread 1)", "fc.weight (thread 2)",
                                "fc.bias (thread 1)", "fc.bias (thread 2)",
                                "model"};
  ASSERT_EQ(t.tracks.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(t.tracks[i].name, tracks[i]);
    EXPECT_EQ(t.tracks[i].kind, v1::TRACK_KIND_QUEUE);
    EXPECT_EQ(t.tracks[i].id, i);
  }

  struct Expected {
    const char* name;
    v1::Category category;
    int track;
    int64_t start_us;  // after ts 3600000000
    int64_t dur_us;
    const char* timeline_name;  // "" if the same
  };
  // In the order they end.
  const Expected expected[] = {
      {"ALLOCATE_OUTPUT", v1::CATEGORY_USER, 1, 10, 10, ""},
      {"COMMUNICATE", v1::CATEGORY_USER, 1, 20, 100, ""},
      {"COMPUTE_AVERAGE", v1::CATEGORY_USER, 1, 120, 10, ""},
      {"PROC_NEIGHBOR_ALLREDUCE", v1::CATEGORY_MPI, 1, 10, 120, ""},
      {"ENQUEUE_NEIGHBOR_ALLREDUCE", v1::CATEGORY_USER, 0, 0, 135, ""},
      {"MPI_Allreduce", v1::CATEGORY_MPI, 3, 205, 45, "PROC_ALLREDUCE"},
      {"ENQUEUE_ALLREDUCE", v1::CATEGORY_USER, 2, 200, 51, ""},
      {"FORWARD", v1::CATEGORY_USER, 4, 260, 30, ""},
  };
  ASSERT_EQ(t.spans.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    const ImportedSpan& s = t.spans[i];
    const Expected& e = expected[i];
    EXPECT_EQ(s.name, e.name) << i;
    EXPECT_EQ(s.category, e.category) << i;
    EXPECT_EQ(s.kind, v1::SPAN_KIND_COMPLETE) << i;
    EXPECT_EQ(s.track, e.track) << i;
    EXPECT_EQ(s.start_ns, kEpoch + kHour + e.start_us * kUs) << i;
    EXPECT_EQ(s.dur_ns, e.dur_us * kUs) << i;
    EXPECT_EQ(s.bytes, 0) << i;
    if (e.timeline_name[0] == '\0') {
      EXPECT_TRUE(s.args.empty()) << i;
    } else {
      ASSERT_EQ(s.args.size(), 1u) << i;
      EXPECT_EQ(s.args[0].key, "timeline_name");
      EXPECT_EQ(std::get<std::string>(s.args[0].value), e.timeline_name);
    }
  }
}

TEST(BluefogTimelineReaderTest, RelativeTimesEndAtTheFallback) {
  ImportOptions options;
  options.file = kFile;
  options.fallback_end_ns = kEpoch;
  options.rank = 9;
  options.node = "host-b";
  const ImportedTrace t = Read(FileText(kFile), options);
  EXPECT_EQ(t.processes[0].rank, 9);
  EXPECT_EQ(t.processes[0].node, "host-b");
  // FORWARD ends last, at ts 3600000290.
  EXPECT_EQ(t.spans.back().name, "FORWARD");
  EXPECT_EQ(t.spans.back().start_ns + t.spans.back().dur_ns, kEpoch);
  ASSERT_EQ(t.notes.size(), 2u);
  EXPECT_TRUE(absl::StrContains(t.notes[1], "modification time"));
}

TEST(BluefogTimelineReaderTest, RelativeTimesWithoutAnEpochAreRefused) {
  const std::string error = Error(FileText(kFile));
  EXPECT_TRUE(absl::StrContains(
      error,
      "bad.json: event 4 (line 6, \"ALLOCATE_OUTPUT\"): field \"ts\": "
      "3600000010000 ns + epoch 0 ns is not a time between 2000 and "
      "2100"))
      << error;
}

TEST(BluefogTimelineReaderTest, NoRankInTheName) {
  const ImportedTrace t = Read(
      R"json([{"ph": "B", "name": "FORWARD", "ts": 1, "pid": 1, "tid": 1},
{"ph": "E", "ts": 2, "pid": 1, "tid": 1},
{"ph": "i", "name": "x", "ts": 2, "pid": 1, "tid": 1},)json",
      {"/p/timeline.json", "", -1, kEpoch, 0});
  EXPECT_EQ(t.processes[0].rank, 0);
  ASSERT_EQ(t.notes.size(), 2u);
  EXPECT_TRUE(absl::StrContains(t.notes[0], "taken as 0")) << t.notes[0];
  EXPECT_EQ(t.notes[1], "1 events of phases not imported (\"i\" 1)");
  ASSERT_EQ(t.spans.size(), 1u);
  EXPECT_EQ(t.tracks[0].name, "tensor 1");
}

TEST(BluefogTimelineReaderTest, RankFromPath) {
  EXPECT_EQ(BluefogRankFromPath("/p/tl12.json"), 12);
  EXPECT_EQ(BluefogRankFromPath("timeline_filename3.json.gz"), 3);
  EXPECT_EQ(BluefogRankFromPath("tl0.json"), 0);
  EXPECT_EQ(BluefogRankFromPath("/p/7/timeline.json"), -1);
  EXPECT_EQ(BluefogRankFromPath("tl.json"), -1);
  EXPECT_EQ(BluefogRankFromPath("tl99999999999.json"), -1);
}

TEST(BluefogTimelineReaderTest, RefusesBrokenFiles) {
  const std::string head =
      "[\n"
      R"json({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "w"}},
)json";
  struct Case {
    std::string events;
    std::string expected;
  };
  const Case cases[] = {
      {R"json({"ph": "B", "name": "FORWARD", "ts": 1, "pid": 1, "tid": 1},
{"ph": "E", "ts": 2, "pid": 1, "tid": 2},)json",
       "bad.json: event 2 (line 4): an \"E\" event with no open \"B\" on its "
       "pid and tid (unbalanced)"},
      {R"json({"ph": "B", "name": "FORWARD", "ts": 5, "pid": 1, "tid": 1},
{"ph": "E", "ts": 2, "pid": 1, "tid": 1},)json",
       "event 2 (line 4): field \"ts\": ends before its \"B\" (event 1)"},
      // A Horovod timeline: no tid.
      {R"json({"ph": "B", "name": "NEGOTIATE_ALLREDUCE", "ts": 1, "pid": 1},)json",
       "event 1 (line 3, \"NEGOTIATE_ALLREDUCE\"): no field \"tid\" (the "
       "thread; a Horovod timeline has none)"},
      {R"json({"ph": "B", "name": "FORWARD", "ts": 1, "pid": "Comm.w", "tid": 1},)json",
       "field \"pid\" is not a tensor index"},
      {R"json({"ph": "B", "name": "FORWARD", "ts": "", "pid": 1, "tid": 1},)json",
       "field \"ts\":  is not a number of microseconds"},
      {R"json({"ph": "B", "name": "FORWARD", "pid": 1, "tid": 1},)json",
       "no field \"ts\""},
      {R"json({"ph": "B", "ts": 1, "pid": 1, "tid": 1},)json",
       "a \"B\" event without \"name\""},
      {R"json({"ph": "B", "name": "FORWARD", "ts": 1, "pid": 1, "tid": {}},)json",
       "field \"tid\" is neither a number nor a string"},
      // Truncated.
      {R"json({"ph": "B", "name": "FORWARD", "ts": 1, "pid": 1, "tid)json",
       "bad.json: line 3 column 51: not valid JSON"},
      {R"json({"ph": "B", "name": "FORWARD", "ts": 1, "pid": 1, "tid": 1} x)json",
       "bad.json: line 3"},
  };
  for (const Case& c : cases) {
    ImportOptions options;
    options.epoch_ns = kEpoch;
    const std::string error = Error(head + c.events, options);
    EXPECT_TRUE(absl::StrContains(error, c.expected))
        << c.events << "\n  gave: " << error << "\n  expected: " << c.expected;
  }
  EXPECT_TRUE(absl::StrContains(
      Error(
          R"json({"traceEvents": [{"ph": "X", "pid": "Comm.w", "name": "Comm.w", "ts": 1764000000000000, "dur": 5, "tid": "total"}]})json"),
      "event 0 (line 1, \"Comm.w\"): field \"pid\" is not a tensor index"));
}

}  // namespace
}  // namespace meridian
