#include "import/timeline_format.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "testing/file_text.h"

namespace meridian {
namespace {

// The first `bytes` of a test file, as meridian import reads a head.
std::string Head(const std::string& path, size_t bytes = 4096) {
  const std::string text = FileText(path);
  EXPECT_FALSE(text.empty()) << path;
  return text.substr(0, bytes);
}

TEST(TimelineFormatTest, KnowsEachFrameworkByItsFirstBytes) {
  EXPECT_EQ(DetectTimelineFormat(Head("import/testdata/horovod_timeline.json")),
            "horovod");
  EXPECT_EQ(DetectTimelineFormat(
                Head("import/testdata/horovod_timeline_unclosed.json")),
            "horovod");
  EXPECT_EQ(DetectTimelineFormat(Head("import/testdata/byteps/0/comm.json")),
            "byteps");
  EXPECT_EQ(DetectTimelineFormat(Head("import/testdata/bluefog/tl1.json")),
            "bluefog");
  // Cut in the middle of a record.
  EXPECT_EQ(
      DetectTimelineFormat(Head("import/testdata/byteps/0/comm.json", 200)),
      "byteps");
  EXPECT_EQ(DetectTimelineFormat(Head("import/testdata/bluefog/tl1.json", 300)),
            "bluefog");
  EXPECT_EQ(
      DetectTimelineFormat(Head("import/testdata/horovod_timeline.json", 120)),
      "horovod");
}

TEST(TimelineFormatTest, LeavesOtherJsonToTheChromeReader) {
  for (const char* head : {
           "",
           "[",
           R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":1,"dur":1}])",
           R"({"traceEvents":[{"name":"process_name","ph":"M","pid":1}]})",
           R"({"schemaVersion":1,"traceEvents":[]})",
           R"([{"ph": "M", "name": "process_name", "pid": 1, "args": {}}])",
           // Another tool's name-first metadata, with and without a tid.
           R"([{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{}},)"
           R"({"name":"forward","ph":"X","pid":1,"tid":3,"ts":5,"dur":1}])",
           R"([{"name":"process_name","ph":"M","pid":1,"args":{}},)"
           R"({"name":"forward","ph":"X","pid":1,"ts":5,"dur":1}])",
       }) {
    EXPECT_EQ(DetectTimelineFormat(head), "") << head;
  }
}

}  // namespace
}  // namespace meridian
