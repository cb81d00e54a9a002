#include "import/timeline_events.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace meridian {
namespace {

std::vector<TimelineEvent> Events(const std::string& json,
                                  TimelineSource source = {"t.json"},
                                  TimelineSummary* summary = nullptr) {
  std::vector<TimelineEvent> events;
  const absl::Status status = ReadTimelineEvents(
      json, source,
      [&](TimelineEvent& e) {
        events.push_back(e);
        return absl::OkStatus();
      },
      summary);
  EXPECT_TRUE(status.ok()) << status;
  return events;
}

std::string Error(const std::string& json, TimelineSource source = {"t.json"}) {
  const absl::Status status = ReadTimelineEvents(
      json, source, [](TimelineEvent&) { return absl::OkStatus(); });
  EXPECT_FALSE(status.ok());
  return std::string(status.message());
}

TEST(TimelineEventsTest, ReadsFieldsIndexesAndLines) {
  const std::vector<TimelineEvent> events = Events(R"json([
{"ph": "X", "name": "a", "cat": "c", "ts": 1.5, "dur": "2", "pid": 3, "tid": "t",
 "args": {"s": "x", "i": -4, "d": 0.5, "b": true, "n": null, "arr": [1, 2]}},

  {"ph": "i", "s": "g", "ts": 7, "pid": 2.0},
{"ph": "E", "ts": 1764000000000000.001, "pid": "p"}
])json");
  ASSERT_EQ(events.size(), 3u);
  const TimelineEvent& a = events[0];
  EXPECT_EQ(a.index, 0);
  EXPECT_EQ(a.line, 2);
  EXPECT_EQ(a.ph, "X");
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.cat, "c");
  EXPECT_EQ(a.ts, 1500);
  EXPECT_EQ(a.dur, 2000);
  ASSERT_TRUE(a.pid && a.pid->numeric);
  EXPECT_EQ(a.pid->number, 3);
  ASSERT_TRUE(a.tid && !a.tid->numeric);
  EXPECT_EQ(a.tid->text, "t");
  ASSERT_EQ(a.args.size(), 5u);
  EXPECT_EQ(std::get<std::string>(a.Arg("s")->value), "x");
  EXPECT_EQ(std::get<int64_t>(a.Arg("i")->value), -4);
  EXPECT_EQ(std::get<double>(a.Arg("d")->value), 0.5);
  EXPECT_EQ(std::get<int64_t>(a.Arg("b")->value), 1);
  EXPECT_EQ(a.Arg("n"), nullptr);
  EXPECT_EQ(std::get<std::string>(a.Arg("arr")->value), "[1, 2]");
  EXPECT_EQ(events[1].index, 1);
  EXPECT_EQ(events[1].line, 5);
  EXPECT_EQ(events[1].scope, "g");
  EXPECT_EQ(events[1].pid->number, 2);
  EXPECT_FALSE(events[1].tid.has_value());
  EXPECT_EQ(events[2].line, 6);
  EXPECT_EQ(events[2].ts, 1764000000000000001);  // exact, past a double
  EXPECT_EQ(events[2].pid->text, "p");
}

TEST(TimelineEventsTest, ReadsEveryContainer) {
  TimelineSummary summary;
  EXPECT_EQ(Events("[{\"ph\":\"B\"},{\"ph\":\"E\"}]").size(), 2u);
  EXPECT_EQ(
      Events("[{\"ph\":\"B\"},\n{\"ph\":\"E\"},\n", {"t"}, &summary).size(),
      2u);
  EXPECT_EQ(summary.events, 2);
  EXPECT_EQ(Events("[{\"ph\":\"B\"}\n").size(), 1u);
  EXPECT_EQ(Events("[\n").size(), 0u);
  EXPECT_EQ(Events(R"({"displayTimeUnit": "ms", "traceEvents": [{"ph": "X"}],
                      "otherData": {}})")
                .size(),
            1u);
}

TEST(TimelineEventsTest, NamesTheEventAndFieldThatIsWrong) {
  EXPECT_EQ(Error("[{\"ph\":\"B\"},\n{\"name\": 3}]"),
            "t.json: event 1 (line 2): field \"name\" is not a string");
  EXPECT_EQ(Error("[{\"ph\":\"B\",\"name\":\"n\",\"ts\":true}]"),
            "t.json: event 0 (line 1, \"n\"): field \"ts\" is not a number");
  EXPECT_EQ(Error("[{\"ts\":\"12x\"}]"),
            "t.json: event 0 (line 1): field \"ts\": 12x is not a number of "
            "microseconds that fits");
  EXPECT_EQ(Error("[{\"pid\":1.5}]"),
            "t.json: event 0 (line 1): field \"pid\" is not an integer");
  EXPECT_EQ(Error("[{\"pid\":[]}]"),
            "t.json: event 0 (line 1): field \"pid\" is neither a number nor "
            "a string");
  EXPECT_EQ(Error("[{\"args\":3}]"),
            "t.json: event 0 (line 1): field \"args\" is not an object");
  EXPECT_EQ(Error("[1]"), "t.json: event 0 (line 1): not an object");
  EXPECT_EQ(Error("{\"traceEvents\": 1}"),
            "t.json: \"traceEvents\" is not an array");
  EXPECT_EQ(Error("{}"),
            "t.json: an object without \"traceEvents\"; nothing imported");
  EXPECT_EQ(Error("null"),
            "t.json: the top level is neither an array of events nor an "
            "object with \"traceEvents\"; nothing imported");
}

TEST(TimelineEventsTest, SyntaxErrorsSayWhere) {
  EXPECT_EQ(Error("[{\"ph\":\"B\"},\n{\"ph\": \"E\", \"ts\": 1 2}]",
                  {"t.json", false, "a hint"}),
            "t.json: line 2 column 21: not valid JSON (The JSON "
            "document has an improper structure: missing or superfluous "
            "commas, braces, missing keys, etc.) in event 1; nothing "
            "imported (a hint)");
  EXPECT_EQ(Error("[{\"ph\":\"B\"},\n{\"ph\": \"E"),
            "t.json: line 2 column 8: not valid JSON (A string is opened, but "
            "never closed.); nothing imported");
  EXPECT_EQ(Error("{\"traceEvents\": [{\"ph\": \"X\"}"),
            "t.json: line 1 column 29: not valid JSON (The JSON document has "
            "an improper structure: missing or superfluous commas, braces, "
            "missing keys, etc.) in event 1; nothing imported");
  EXPECT_EQ(Error("{\"traceEvents\": [{\"ph\": \"X\""),
            "t.json: line 1 column 27: not valid JSON (JSON document ended "
            "early in the middle of an object or array.); nothing imported");
}

TEST(TimelineEventsTest, VisitErrorsEndTheReading) {
  int seen = 0;
  const absl::Status status =
      ReadTimelineEvents("[{},{},{}]", {"t.json"}, [&](TimelineEvent& e) {
        ++seen;
        return e.index == 1 ? EventError("t.json", e, "no") : absl::OkStatus();
      });
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(status.message(), "t.json: event 1 (line 1): no");
}

TEST(TimelineEventsTest, ErrorsNameWhatIsKnown) {
  EXPECT_EQ(EventError("f", 3, 0, "", "x").message(), "f: event 3: x");
  EXPECT_EQ(EventError("f", 3, 0, "n", "x").message(), "f: event 3 (\"n\"): x");
  EXPECT_EQ(EventError("f", 3, 9, "n", "x").message(),
            "f: event 3 (line 9, \"n\"): x");
  EXPECT_EQ(EventError("f", 3, 9, std::string(100, 'a'), "x").message(),
            "f: event 3 (line 9, \"" + std::string(80, 'a') + "\"): x");
}

// Horovod's and Bluefog's process_name records, names written raw.
TEST(TimelineEventsTest, EscapesRawProcessNames) {
  std::string json =
      "[\n"
      R"({"name": "process_name", "ph": "M", "pid": 1, "args": {"name": "a"b"}},)"
      "\n"
      R"({"name": "process_name", "ph": "M", "pid": 2, "args": {"name": "c\d"}},)"
      "\n"
      R"({"name": "process_name", "ph": "M", "pid": 3, "args": {"name": "e\"f\u0041"}},)"
      "\n"
      R"({"name": "process_name", "ph": "M", "pid": 4, "args": {"name": "tab	x\"}},)"
      "\n"
      R"({"name": "process_name", "ph": "M", "pid": 0, "args": {"start_time_since_epoch_in_micros": 1}}])";
  EXPECT_EQ(EscapeRawProcessNames(&json), 3);
  TimelineSummary summary;
  const std::vector<TimelineEvent> events =
      Events(json, {"t.json", /*escape_process_names=*/false}, &summary);
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(std::get<std::string>(events[0].Arg("name")->value), "a\"b");
  EXPECT_EQ(std::get<std::string>(events[1].Arg("name")->value), "c\\d");
  EXPECT_EQ(std::get<std::string>(events[2].Arg("name")->value), "e\"fA");
  EXPECT_EQ(std::get<std::string>(events[3].Arg("name")->value), "tab\tx\\");
  EXPECT_EQ(summary.escaped_names, 0);

  std::string valid = R"([{"name": "process_name", "args": {"name": "ok"}}])";
  EXPECT_EQ(EscapeRawProcessNames(&valid), 0);
  std::string cut = R"([{"name": "process_name", "args": {"name": "x"b)";
  EXPECT_EQ(EscapeRawProcessNames(&cut), 0);
}

// Text that only looks like records: each byte is looked at a bounded
// number of times (quadratic, this would take minutes).
TEST(TimelineEventsTest, EscapingStaysLinear) {
  std::string many;
  for (int i = 0; i < 200000; ++i) {
    many += R"({"name": "process_name", "args": {"name": "x"y )";
  }
  std::string copy = many;
  EXPECT_EQ(EscapeRawProcessNames(&copy), 0);
  EXPECT_EQ(copy, many);
  std::string spaces = R"([{"name": "process_name", "args": {"name": "a"b")" +
                       std::string(1000, ' ') + "}}]";
  EXPECT_EQ(EscapeRawProcessNames(&spaces), 1);
  // No name is that long.
  std::string far = R"([{"name": "process_name", "args": {"name": "a"b")" +
                    std::string(1 << 20, ' ') + "}}]";
  EXPECT_EQ(EscapeRawProcessNames(&far), 0);
}

TEST(TimelineEventsTest, SkippedPhasesNote) {
  EXPECT_EQ(SkippedPhasesNote({}), "");
  EXPECT_EQ(SkippedPhasesNote({{"C", 2}, {"P", 1}}),
            "3 events of phases not imported (\"C\" 2, \"P\" 1)");
}

}  // namespace
}  // namespace meridian
